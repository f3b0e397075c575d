package native

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// pidMarker starts the line the remote shell writes to standard error
// first: its own PID, which is also its process group's ID (sshd starts
// every session's command in a session of its own). The stderr copier
// takes the line out of the runtime's standard error.
const pidMarker = "acpdrive-native-pgid "

// pidMarkerCommand is prepended to the remote command.
const pidMarkerCommand = `printf '` + pidMarker + `%s\n' "$$" >&2` + "\n"

// Teardown and bookkeeping bounds.
const (
	// killWindow bounds Kill: the remote group kill, the channel close and
	// the wait for the channel to end.
	killWindow = 2 * time.Second
	// stderrDrainBound bounds Release's wait for standard error's end.
	stderrDrainBound = time.Second
	// settleBound bounds Release's wait for the request handler and the
	// last stdin write.
	settleBound = time.Second
	// stderrSettle bounds StderrTail's wait for standard error's end once
	// the channel has ended.
	stderrSettle = 250 * time.Millisecond
	// lostGrace is how long a channel that ended without an exit status
	// waits to learn whether the connection died with it.
	lostGrace = 250 * time.Millisecond
	// maxMarkerLine bounds the first stderr line inspected for the marker.
	maxMarkerLine = 64
)

// errWriteInProgress is returned by a write started while an earlier one
// (abandoned at its deadline) is still being sent.
var errWriteInProgress = errors.New("native ssh: an earlier write to the remote standard input is still in progress")

// process is one remote runtime on a session channel. It implements
// ports.Process.
type process struct {
	l      *Launcher
	c      *sharedConn
	ch     ssh.Channel
	logger *slog.Logger

	stdin  *stdinWriter
	stdout *stdoutReader
	tail   domain.TailBuffer

	pgid     atomic.Int64 // the remote process group, 0 until the marker arrived
	gotPGID  chan struct{}
	pgidOnce sync.Once

	killed atomic.Bool // Kill closed the channel

	exited     chan struct{} // closed once the channel has ended and exit is set
	reqsDone   chan struct{} // the request handler returned
	copierDone chan struct{} // the stderr copier returned

	mu   sync.Mutex
	exit domain.ExitStatus

	closeOnce sync.Once

	releaseOnce sync.Once
	releaseErr  error
}

var _ ports.Process = (*process)(nil)

// startSession opens the channel, starts its goroutines, sends the exec
// request and writes the preamble.
func startSession(ctx context.Context, l *Launcher, c *sharedConn, command string, preamble []byte) (*process, error) {
	ch, reqs, err := c.client.OpenChannel("session", nil)
	if err != nil {
		select {
		case <-c.dead:
			return nil, domain.WrapError(domain.KindPortExit, MsgConnectFailed,
				fmt.Errorf("ssh connection to %s lost: %s", l.host, c.lostReason()))
		default:
		}
		return nil, domain.WrapError(domain.KindPortExit, msgSessionFailed, err)
	}
	p := &process{
		l:          l,
		c:          c,
		ch:         ch,
		logger:     l.logger,
		gotPGID:    make(chan struct{}),
		exited:     make(chan struct{}),
		reqsDone:   make(chan struct{}),
		copierDone: make(chan struct{}),
	}
	p.stdin = &stdinWriter{ch: ch, closed: make(chan struct{})}
	p.stdout = &stdoutReader{p: p}
	go p.handleRequests(reqs)
	go p.copyStderr()

	fail := func(msg string, err error) (*process, error) {
		p.closeChannel()
		_ = p.releaseStreams() // the caller releases the connection
		return nil, domain.WrapError(domain.KindPortExit, msg, err)
	}
	// The exec request waits for the server's answer; ctx ending closes
	// the channel, which ends the wait.
	stop := context.AfterFunc(ctx, p.closeChannel)
	ok, err := ch.SendRequest("exec", true, ssh.Marshal(struct{ Command string }{command}))
	stop()
	if err != nil {
		return fail(msgSessionFailed, err)
	}
	if !ok {
		return fail(msgSessionFailed, fmt.Errorf("the SSH server on %s refused the exec request", l.host))
	}
	if len(preamble) > 0 {
		if d, ok := ctx.Deadline(); ok {
			_ = p.stdin.SetWriteDeadline(d)
		}
		stop := context.AfterFunc(ctx, func() { _ = p.stdin.SetWriteDeadline(time.Unix(1, 0)) })
		n, err := p.stdin.Write(preamble)
		stop()
		_ = p.stdin.SetWriteDeadline(time.Time{})
		if err == nil && n < len(preamble) {
			err = io.ErrShortWrite
		}
		if err != nil {
			return fail(msgPreambleFailed, err)
		}
	}
	l.logger.Debug("remote session started", slog.String("host", l.host))
	return p, nil
}

// handleRequests records exit-status and exit-signal until the channel
// ends, then settles the exit status.
func (p *process) handleRequests(reqs <-chan *ssh.Request) {
	defer close(p.reqsDone)
	st := domain.ExitStatus{Exited: true, Code: -1}
	got := false
	for r := range reqs {
		switch r.Type {
		case "exit-status":
			if len(r.Payload) >= 4 {
				st.Code = int(binary.BigEndian.Uint32(r.Payload))
				got = true
			}
		case "exit-signal":
			var sig struct {
				Signal     string
				CoreDumped bool
				Error      string
				Lang       string
			}
			if ssh.Unmarshal(r.Payload, &sig) == nil {
				st.Code, st.Signal, st.Message = -1, sig.Signal, sig.Error
				got = true
			}
		}
		if r.WantReply {
			_ = r.Reply(false, nil)
		}
	}
	if !got {
		st = p.unreportedEnd()
	}
	p.mu.Lock()
	p.exit = st
	p.mu.Unlock()
	close(p.exited)
}

// unreportedEnd is the status of a channel that ended without an exit
// status: killed by this side, the connection lost (255, like ssh), or a
// server that closed the session without saying how it ended (255 too).
func (p *process) unreportedEnd() domain.ExitStatus {
	if p.killed.Load() {
		return domain.ExitStatus{Exited: true, Code: -1, Signal: "killed"}
	}
	t := time.NewTimer(lostGrace)
	defer t.Stop()
	select {
	case <-p.c.dead:
		return domain.ExitStatus{Exited: true, Code: 255,
			Message: fmt.Sprintf("ssh connection to %s lost: %s", p.l.host, p.c.lostReason())}
	case <-t.C:
		return domain.ExitStatus{Exited: true, Code: 255,
			Message: "the SSH server closed the session without an exit status"}
	}
}

// copyStderr keeps the tail of the channel's standard error, taking the
// PID marker line out.
func (p *process) copyStderr() {
	defer close(p.copierDone)
	defer p.pgidOnce.Do(func() { close(p.gotPGID) })
	r := p.ch.Stderr()
	buf := make([]byte, 32<<10)
	var first []byte // the first line, until it is complete
	marker := true
	for {
		n, err := r.Read(buf)
		b := buf[:n]
		if marker && n > 0 {
			first = append(first, b...)
			i := bytes.IndexByte(first, '\n')
			switch {
			case i >= 0:
				marker = false
				rest := p.takeMarker(first[:i+1])
				_, _ = p.tail.Write(rest)
				_, _ = p.tail.Write(first[i+1:])
			case len(first) > maxMarkerLine || !bytes.HasPrefix([]byte(pidMarker), first[:min(len(first), len(pidMarker))]):
				marker = false
				_, _ = p.tail.Write(first)
				p.pgidOnce.Do(func() { close(p.gotPGID) })
			}
			b = nil
		}
		if len(b) > 0 {
			_, _ = p.tail.Write(b)
		}
		if err != nil {
			if marker && len(first) > 0 {
				_, _ = p.tail.Write(first)
			}
			return
		}
	}
}

// takeMarker records the group ID when line is the marker and returns
// what of line belongs to the runtime's standard error.
func (p *process) takeMarker(line []byte) []byte {
	defer p.pgidOnce.Do(func() { close(p.gotPGID) })
	s, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte(pidMarker))
	if !ok {
		return line
	}
	if n, err := strconv.Atoi(string(s)); err == nil && n > 1 {
		p.pgid.Store(int64(n))
	}
	return nil
}

// Identity names the host; there is no local process.
func (p *process) Identity() ports.Identity { return ports.Identity{PID: 0, Host: p.l.host} }

// Stdin is the channel's standard input. Close sends EOF; a write in
// progress returns at once when it is closed, and when the connection
// ends.
func (p *process) Stdin() io.WriteCloser { return p.stdin }

// Stdout is the channel's standard output.
func (p *process) Stdout() io.Reader { return p.stdout }

// Exited is closed once the channel has ended.
func (p *process) Exited() <-chan struct{} { return p.exited }

// Exit reports how the session ended: the remote exit status, or the
// signal (with the server's message) of an exit-signal, or 255 with the
// reason when the connection was lost. Zero until Exited is closed.
func (p *process) Exit() domain.ExitStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exit
}

// StderrTail returns the last 8 KiB of the channel's standard error; once
// the channel has ended it first waits briefly for the stream's end.
func (p *process) StderrTail() ([]byte, bool) {
	select {
	case <-p.exited:
		t := time.NewTimer(stderrSettle)
		select {
		case <-p.copierDone:
		case <-t.C:
		}
		t.Stop()
	default:
	}
	return p.tail.Tail()
}

// Terminate sends the TERM signal request (the remote shell wrapper
// ignores it; sshd delivers it only to that shell) and TERM to the
// session's whole remote process group through a second channel of the
// same connection.
func (p *process) Terminate() error {
	if isClosed(p.exited) {
		return nil
	}
	_, err := p.ch.SendRequest("signal", false, ssh.Marshal(struct{ Signal string }{"TERM"}))
	if err != nil && !errors.Is(err, io.EOF) {
		err = fmt.Errorf("native ssh: signal request: %w", err)
	} else {
		err = nil
	}
	if gerr := p.signalGroup("TERM", settleBound); gerr != nil {
		p.logger.Debug("could not signal the remote process group", slog.String("error", gerr.Error()))
	}
	return err
}

// Kill sends KILL to the session's remote process group (through a second
// channel, re-sent until the group is empty or killWindow has passed),
// closes the channel and waits, within the same window, for it to end.
// The containment wrapper of remotecmd.RemoteCommand ends the group itself
// when the connection is gone. A group still present at the end of the
// window is reported as a survivor by its group ID; with no way to look
// (the connection is gone) nothing is reported.
func (p *process) Kill() error {
	deadline := time.Now().Add(killWindow)
	var survivors []domain.Survivor
	if pg := p.pgid.Load(); pg > 0 && !isClosed(p.c.dead) {
		alive, err := p.killGroup(pg, killWindow)
		if err != nil {
			p.logger.Debug("could not kill the remote process group", slog.String("error", err.Error()))
		} else if alive {
			survivors = append(survivors, domain.Survivor{PID: int(pg), Host: p.l.host, Name: "process group"})
		}
	}
	p.killed.Store(true)
	p.closeChannel()
	t := time.NewTimer(max(time.Until(deadline), 100*time.Millisecond))
	defer t.Stop()
	select {
	case <-p.exited:
	case <-t.C:
		p.logger.Debug("the session channel had not ended after the force kill", slog.String("host", p.l.host))
	}
	if len(survivors) > 0 {
		p.logger.Warn("agent runtime processes survived the force kill", slog.String("host", p.l.host),
			slog.Int64("remote_pgid", p.pgid.Load()))
		return &domain.SurvivorsError{Survivors: survivors}
	}
	return nil
}

// signalGroup sends sig to the remote group through a new channel.
func (p *process) signalGroup(sig string, bound time.Duration) error {
	pg := p.pgid.Load()
	if pg <= 0 {
		return errors.New("remote process group not known")
	}
	_, err := p.runAside(fmt.Sprintf("kill -s %s -- -%d 2>/dev/null; exit 0", sig, pg), bound)
	return err
}

// killGroup KILLs the group every 50 ms until it is empty or bound passes
// (one remote command); alive reports a group still present at the end.
//
// A member killed after its parent ended is an orphan: it stays in the
// group as a zombie until the remote init reaps it, and kill(2) still
// succeeds on a group of zombies. Some inits reap lazily (seconds later),
// and the containment wrapper's watchdog is such an orphan once the
// runtime has exited on its own, so a group whose remaining members are
// all zombies counts as empty: nothing of it runs. The zombie check uses
// ps and awk when the remote host has them; without them the kill's own
// answer decides, as before.
func (p *process) killGroup(pg int64, bound time.Duration) (alive bool, err error) {
	code, err := p.runAside(killGroupCommand(pg, int(bound/(50*time.Millisecond))), bound+time.Second)
	if err != nil {
		return false, err
	}
	return code == 3, nil
}

// killGroupCommand is the remote loop of killGroup: exit 0 once the group
// is empty or holds only zombies, exit 3 after rounds rounds.
func killGroupCommand(pg int64, rounds int) string {
	g := strconv.FormatInt(pg, 10)
	return `acpdrive_live() {
  command -v ps >/dev/null 2>&1 && command -v awk >/dev/null 2>&1 || return 0
  acpdrive_ps=$(ps -A -o pgid= -o stat= 2>/dev/null) || return 0
  printf '%s\n' "$acpdrive_ps" | awk -v g=` + g + ` '$1 == g && $2 !~ /^Z/ { live = 1 } END { exit !live }'
}
i=0
while kill -s KILL -- -` + g + ` 2>/dev/null; do
  acpdrive_live || exit 0
  i=$((i+1)); [ "$i" -ge ` + strconv.Itoa(rounds) + ` ] && exit 3
  sleep 0.05 2>/dev/null || sleep 1
done
exit 0
`
}

// runAside runs cmd on its own channel of the connection and returns its
// exit status, bounded.
func (p *process) runAside(cmd string, bound time.Duration) (int, error) {
	type result struct {
		code int
		err  error
	}
	done := make(chan result, 1)
	sess, err := p.c.client.NewSession()
	if err != nil {
		return 0, err
	}
	go func() {
		err := sess.Run(cmd)
		var ee *ssh.ExitError
		switch {
		case err == nil:
			done <- result{}
		case errors.As(err, &ee):
			done <- result{code: ee.ExitStatus()}
		default:
			done <- result{err: err}
		}
	}()
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case r := <-done:
		_ = sess.Close()
		return r.code, r.err
	case <-t.C:
		_ = sess.Close() // ends Run
		<-done
		return 0, fmt.Errorf("remote command did not finish within %v", bound)
	}
}

// closeChannel closes the session channel once.
func (p *process) closeChannel() {
	p.closeOnce.Do(func() { _ = p.ch.Close() })
}

// CloseStdout makes every later read of standard output report end of
// stream and closes the channel, which ends a read in progress.
func (p *process) CloseStdout() error {
	p.stdout.closed.Store(true)
	p.closeChannel()
	return nil
}

// Release closes standard input and the channel, waits (bounded) for
// standard error, the request handler and a last stdin write, and ends
// this session's use of the connection; the last session closes it.
func (p *process) Release() error {
	p.releaseOnce.Do(func() { p.releaseErr = p.release() })
	return p.releaseErr
}

func (p *process) release() error {
	err := p.releaseStreams()
	if cerr := p.c.release(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	return err
}

// releaseStreams is Release short of the connection's release.
func (p *process) releaseStreams() error {
	var errs []error
	_ = p.stdin.Close()
	t := time.NewTimer(stderrDrainBound)
	select {
	case <-p.copierDone:
	case <-t.C:
	}
	t.Stop()
	p.closeChannel()
	wait := func(what string, ch <-chan struct{}) {
		t := time.NewTimer(settleBound)
		defer t.Stop()
		select {
		case <-ch:
		case <-t.C:
			errs = append(errs, fmt.Errorf("native ssh: %s had not ended at release", what))
		}
	}
	wait("standard error", p.copierDone)
	wait("the session channel", p.reqsDone)
	wait("the last write to standard input", p.stdin.idle())
	return errors.Join(errs...)
}

// stdoutReader reads the channel's standard output until CloseStdout.
type stdoutReader struct {
	p      *process
	closed atomic.Bool
}

func (r *stdoutReader) Read(b []byte) (int, error) {
	if r.closed.Load() {
		return 0, os.ErrClosed
	}
	n, err := r.p.ch.Read(b)
	if err != nil && r.closed.Load() && n == 0 {
		return 0, os.ErrClosed
	}
	return n, err
}

// stdinWriter is the channel's standard input. Each write is sent by a
// goroutine of its own so that the caller returns at the write deadline,
// at Close or when the connection ends, whatever the remote window does;
// EOF is sent after the last byte of a write still in progress at Close.
type stdinWriter struct {
	ch ssh.Channel

	mu       sync.Mutex
	closed   chan struct{} // closed by Close
	isClosed bool
	eofSent  bool
	busy     chan struct{} // closed when the write in progress has finished; nil when none
	deadline time.Time
	closeErr error
}

// Write sends b. It returns when b has been handed to the connection, at
// the deadline (os.ErrDeadlineExceeded, the write going on in the
// background), or at Close (os.ErrClosed).
func (w *stdinWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	if w.isClosed {
		w.mu.Unlock()
		return 0, os.ErrClosed
	}
	if w.busy != nil {
		w.mu.Unlock()
		return 0, errWriteInProgress
	}
	data := bytes.Clone(b)
	done := make(chan struct{})
	w.busy = done
	deadline := w.deadline
	w.mu.Unlock()

	var n int
	var err error
	go func() {
		n, err = w.ch.Write(data)
		w.mu.Lock()
		w.busy = nil
		sendEOF := w.isClosed && !w.eofSent
		w.eofSent = w.eofSent || sendEOF
		w.mu.Unlock()
		if sendEOF {
			_ = w.ch.CloseWrite()
		}
		close(done)
	}()

	var timeout <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-done:
		return n, err
	case <-w.closed:
		return 0, os.ErrClosed
	case <-timeout:
		return 0, os.ErrDeadlineExceeded
	}
}

// SetWriteDeadline bounds the next writes (the jsonrpc writer uses it).
func (w *stdinWriter) SetWriteDeadline(t time.Time) error {
	w.mu.Lock()
	w.deadline = t
	w.mu.Unlock()
	return nil
}

// Close sends EOF (after a write still in progress). Later calls return
// the first call's result.
func (w *stdinWriter) Close() error {
	w.mu.Lock()
	if w.isClosed {
		err := w.closeErr
		w.mu.Unlock()
		return err
	}
	w.isClosed = true
	close(w.closed)
	sendEOF := w.busy == nil && !w.eofSent
	w.eofSent = w.eofSent || sendEOF
	w.mu.Unlock()
	var err error
	if sendEOF {
		if cerr := w.ch.CloseWrite(); cerr != nil && !errors.Is(cerr, io.EOF) {
			err = cerr
		}
	}
	w.mu.Lock()
	w.closeErr = err
	w.mu.Unlock()
	return err
}

// idle returns a channel closed once no write is in progress.
func (w *stdinWriter) idle() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.busy != nil {
		return w.busy
	}
	c := make(chan struct{})
	close(c)
	return c
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
