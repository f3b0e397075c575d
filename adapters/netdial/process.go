package netdial

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// closeBound bounds Release's wait for a graceful close in progress.
const closeBound = 2 * time.Second

// process is one connection to a runtime standing in for its process
// (docs/behaviour.md#network): it has ended once the receiving side has
// ended, whether the server closed the link, the link broke, or this side
// closed it.
type process struct {
	host   string
	stdin  io.WriteCloser
	stdout io.Reader

	// closeNow ends the link at once; it is idempotent and ends every read
	// and write in progress.
	closeNow func() error

	exitOnce sync.Once
	exited   chan struct{}
	mu       sync.Mutex
	exit     domain.ExitStatus
	closing  atomic.Bool // this side ended the link

	wg sync.WaitGroup // a graceful close in progress
}

var _ ports.Process = (*process)(nil)

func newProcess(host string) *process {
	return &process{host: host, exited: make(chan struct{})}
}

// ended records how the link ended, once.
func (p *process) ended(err error, normal bool) {
	p.exitOnce.Do(func() {
		st := domain.ExitStatus{Exited: true, Code: -1, Message: "the connection to the runtime broke"}
		switch {
		case p.closing.Load():
			st.Message = "the connection was closed by acpdrive"
		case normal:
			st.Code, st.Message = 0, "the server closed the connection"
		case err != nil:
			st.Message += ": " + err.Error()
		}
		p.mu.Lock()
		p.exit = st
		p.mu.Unlock()
		close(p.exited)
	})
}

// Identity names the URL; there is no local process.
func (p *process) Identity() ports.Identity { return ports.Identity{Host: p.host} }

// Stdin is the link's sending side; Close asks the server to end the
// runtime (a half close, or the WebSocket close handshake).
func (p *process) Stdin() io.WriteCloser { return p.stdin }

// Stdout is the link's receiving side.
func (p *process) Stdout() io.Reader { return p.stdout }

// Terminate ends the link: the server ends the runtime it served on it.
func (p *process) Terminate() error {
	p.closing.Store(true)
	return ignoreClosed(p.closeNow())
}

// Kill ends the link, as Terminate; nothing local survives it.
func (p *process) Kill() error { return p.Terminate() }

// Exited is closed once the receiving side has ended.
func (p *process) Exited() <-chan struct{} { return p.exited }

// Exit reports how the link ended.
func (p *process) Exit() domain.ExitStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exit
}

// CloseStdout ends the link, unblocking any read.
func (p *process) CloseStdout() error { return p.Terminate() }

// StderrTail is empty: a runtime at a URL has no standard error here.
func (p *process) StderrTail() ([]byte, bool) { return nil, false }

// Release ends the link and waits (bounded) for a graceful close in
// progress.
func (p *process) Release() error {
	err := p.Terminate()
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	t := time.NewTimer(closeBound)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		err = errors.Join(err, errors.New("the connection's close had not finished at release"))
	}
	return err
}

// ignoreClosed drops the error of closing what was closed already.
func ignoreClosed(err error) error {
	if err == nil || errors.Is(err, errClosed) || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
