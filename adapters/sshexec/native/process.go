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
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/acpdrive/acpdrive/adapters/internal/procio"
	"github.com/acpdrive/acpdrive/adapters/sshexec/internal/remotecmd"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// Teardown and bookkeeping bounds.
const (
	// killWindow bounds Kill: the remote group kill, the channel close and
	// the wait for the channel to end.
	killWindow = 2 * time.Second
	// killResend is the pause between the remote group kill's rounds.
	killResend = 50 * time.Millisecond
	// killRounds is how many rounds the remote group kill makes at most.
	killRounds = int(killWindow / killResend)
	// stderrDrainBound bounds Release's wait for standard error's end.
	stderrDrainBound = time.Second
	// settleBound bounds Release's wait for the request handler and the
	// last stdin write.
	settleBound = time.Second
	// lostGrace is how long a channel that ended without an exit status
	// waits to learn whether the connection died with it.
	lostGrace = 250 * time.Millisecond
)

// errWriteInProgress is returned by a write started while an earlier one
// (abandoned at its deadline) is still being sent.
var errWriteInProgress = errors.New("native ssh: an earlier write to the remote standard input is still in progress")

// process is one remote runtime on a session channel. It implements
// ports.Process; its streams and exit value are procio's (Exited is closed
// once the channel has ended).
type process struct {
	*procio.Streams

	l      *Launcher
	c      *sharedConn
	ch     ssh.Channel
	logger *slog.Logger

	stdin  *stdinWriter
	stdout *stdoutReader
	group  *remotecmd.PGIDFilter // the remote process group, from standard error

	killed atomic.Bool // Kill closed the channel

	reqsDone chan struct{} // the request handler returned

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
		l:        l,
		c:        c,
		ch:       ch,
		logger:   l.logger,
		reqsDone: make(chan struct{}),
	}
	p.stdin = &stdinWriter{ch: ch, closed: make(chan struct{})}
	p.stdout = &stdoutReader{p: p}
	p.Streams = procio.Start(procio.Config{
		Stdin:  p.stdin,
		Stdout: p.stdout,
		CloseStdout: func() error {
			p.stdout.closed.Store(true)
			p.closeChannel() // ends a read in progress
			return nil
		},
		Stderr:      ch.Stderr(),
		CloseStderr: func() error { p.closeChannel(); return nil },
		StderrSink: func(tail io.Writer) io.Writer {
			p.group = &remotecmd.PGIDFilter{W: tail}
			return p.group
		},
	})
	go p.handleRequests(reqs)

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
	p.SetExit(st)
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

// Identity names the host; there is no local process.
func (p *process) Identity() ports.Identity { return ports.Identity{PID: 0, Host: p.l.host} }

// Terminate sends the TERM signal request (the remote shell wrapper
// ignores it; sshd delivers it only to that shell) and TERM to the
// session's whole remote process group through a second channel of the
// same connection.
func (p *process) Terminate() error {
	if procio.Closed(p.Exited()) {
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
	if pg := p.group.PGID(); pg > 0 && !procio.Closed(p.c.dead) {
		out, code, err := p.runAsideOutput(remotecmd.KillGroupCommand(pg, killRounds), killWindow+time.Second)
		if err != nil {
			p.logger.Debug("could not kill the remote process group", slog.String("error", err.Error()))
		} else {
			survivors = remotecmd.GroupSurvivors(code, pg, p.l.host)
			if rounds, ok := remotecmd.KillRounds(out); ok {
				p.logger.Debug("remote process group killed", slog.Int64("remote_pgid", pg),
					slog.Int("rounds", rounds), slog.Int("max_rounds", killRounds))
			}
		}
	}
	p.killed.Store(true)
	p.closeChannel()
	t := time.NewTimer(max(time.Until(deadline), 100*time.Millisecond))
	defer t.Stop()
	select {
	case <-p.Exited():
	case <-t.C:
		p.logger.Debug("the session channel had not ended after the force kill", slog.String("host", p.l.host))
	}
	if len(survivors) > 0 {
		p.logger.Warn("agent runtime processes survived the force kill", slog.String("host", p.l.host),
			slog.Int64("remote_pgid", p.group.PGID()))
		return &domain.SurvivorsError{Survivors: survivors}
	}
	return nil
}

// signalGroup sends sig to the remote group through a new channel.
func (p *process) signalGroup(sig string, bound time.Duration) error {
	pg := p.group.PGID()
	if pg <= 0 {
		return errors.New("remote process group not known")
	}
	_, err := p.runAside(remotecmd.SignalGroupCommand(sig, pg), bound)
	return err
}

// runAside runs cmd on its own channel of the connection and returns its
// exit status, bounded.
func (p *process) runAside(cmd string, bound time.Duration) (int, error) {
	_, code, err := p.runAsideOutput(cmd, bound)
	return code, err
}

// runAsideOutput is runAside that also returns what cmd wrote to standard
// output (at most a line is expected).
func (p *process) runAsideOutput(cmd string, bound time.Duration) ([]byte, int, error) {
	type result struct {
		out  []byte
		code int
		err  error
	}
	done := make(chan result, 1)
	sess, err := p.c.client.NewSession()
	if err != nil {
		return nil, 0, err
	}
	go func() {
		out, err := sess.Output(cmd)
		var ee *ssh.ExitError
		switch {
		case err == nil:
			done <- result{out: out}
		case errors.As(err, &ee):
			done <- result{out: out, code: ee.ExitStatus()}
		default:
			done <- result{err: err}
		}
	}()
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case r := <-done:
		_ = sess.Close()
		return r.out, r.code, r.err
	case <-t.C:
		_ = sess.Close() // ends Output
		<-done
		return nil, 0, fmt.Errorf("remote command did not finish within %v", bound)
	}
}

// closeChannel closes the session channel once.
func (p *process) closeChannel() {
	p.closeOnce.Do(func() { _ = p.ch.Close() })
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
	_ = p.stdin.Close()
	errs := []error{p.DrainStderr(stderrDrainBound)}
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
