package localexec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// Contract messages for a start that fails after validation
// (reference-tables §3).
const (
	msgStartFailed         = "failed to start subprocess"
	msgStdinPipeFailed     = "failed to create stdin pipe"
	msgStdoutPipeFailed    = "failed to create stdout pipe"
	msgStderrPipeFailed    = "failed to create stderr pipe"
	msgPlatformUnsupported = "process groups are not supported on this platform yet"
)

// Teardown bounds.
const (
	// killWindow is how long Kill keeps re-sending SIGKILL while members
	// of the group survive.
	killWindow = 2 * time.Second
	// killResendInterval is the pause between SIGKILL rounds.
	killResendInterval = 50 * time.Millisecond
	// stderrDrainBound is how long Release waits for standard error to
	// reach end of file before closing it; a descendant may hold it open.
	stderrDrainBound = time.Second
	// reapBound is how long Release waits for the reaper. Release runs
	// after Kill, so the child is dead or about to be reaped.
	reapBound = time.Second
	// maxLoggedStderrLine caps one standard-error line logged at Debug.
	maxLoggedStderrLine = 1 << 10
)

// process is a started runtime. It implements ports.Process.
type process struct {
	logger *slog.Logger
	pid    int
	pgid   int

	stdin  *stdinPipe
	stdout *os.File
	stderr *os.File
	tail   tailRing

	exited     chan struct{} // closed by the reaper after recording the status
	reaperDone chan struct{} // closed when the reaper goroutine returns
	copierDone chan struct{} // closed when the stderr copier returns

	mu         sync.Mutex
	exitStatus string
	exitCode   int

	stdoutOnce sync.Once
	stdoutErr  error
	stderrOnce sync.Once
	stderrErr  error

	releaseOnce sync.Once
	releaseErr  error
}

var _ ports.Process = (*process)(nil)

// start creates the pipes, starts the program at path and the process's
// two goroutines.
func start(ctx context.Context, logger *slog.Logger, path string, req ports.LaunchRequest) (*process, error) {
	if err := platformCheck(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, domain.WrapError(domain.KindPortExit, msgStartFailed, err)
	}

	var opened []*os.File
	closeAll := func() {
		for _, f := range opened {
			_ = f.Close()
		}
	}
	pipe := func(msg string) (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err != nil {
			return nil, nil, domain.WrapError(domain.KindPortExit, msg, err)
		}
		opened = append(opened, r, w)
		return r, w, nil
	}
	inR, inW, err := pipe(msgStdinPipeFailed)
	if err != nil {
		closeAll()
		return nil, err
	}
	outR, outW, err := pipe(msgStdoutPipeFailed)
	if err != nil {
		closeAll()
		return nil, err
	}
	errR, errW, err := pipe(msgStderrPipeFailed)
	if err != nil {
		closeAll()
		return nil, err
	}

	// The Cmd is built by hand: exec.Command would search PATH again, and
	// the pipes are *os.File values, so exec starts no copying goroutines
	// and the child is reaped without waiting on any pipe.
	cmd := &exec.Cmd{
		Path:        path,
		Args:        append([]string(nil), req.Command...),
		Env:         append(os.Environ(), req.ExtraEnv...),
		Dir:         req.Workspace,
		Stdin:       inR,
		Stdout:      outW,
		Stderr:      errW,
		SysProcAttr: sysProcAttr(),
	}
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, domain.WrapError(domain.KindPortExit, msgStartFailed, err)
	}
	// The child holds its own copies now; keeping ours would stop standard
	// output and error from ever reaching end of file.
	_ = inR.Close()
	_ = outW.Close()
	_ = errW.Close()

	p := &process{
		logger:     logger,
		pid:        cmd.Process.Pid,
		pgid:       cmd.Process.Pid, // Setpgid with Pgid 0: the child leads its group
		stdin:      &stdinPipe{f: inW},
		stdout:     outR,
		stderr:     errR,
		exited:     make(chan struct{}),
		reaperDone: make(chan struct{}),
		copierDone: make(chan struct{}),
		exitCode:   -1,
	}
	go p.reap(cmd.Process)
	go p.copyStderr()
	return p, nil
}

// reap waits for the direct child, records how it ended and closes exited.
func (p *process) reap(proc *os.Process) {
	defer close(p.reaperDone)
	state, err := proc.Wait()
	p.mu.Lock()
	if err != nil {
		p.exitStatus = "wait failed: " + err.Error()
		p.exitCode = -1
	} else {
		p.exitStatus = state.String()
		p.exitCode = state.ExitCode()
	}
	p.mu.Unlock()
	close(p.exited)
}

// copyStderr keeps the tail of standard error until end of file or until
// Release closes the read end.
func (p *process) copyStderr() {
	defer close(p.copierDone)
	var w io.Writer = &p.tail
	var lines *lineLogger
	if p.logger.Enabled(context.Background(), slog.LevelDebug) {
		lines = &lineLogger{logger: p.logger, pid: p.pid}
		w = io.MultiWriter(&p.tail, lines)
	}
	// The copy ends with end of file or with the error a closed read end
	// reports; either way there is nothing more to keep.
	_, _ = io.Copy(w, p.stderr)
	if lines != nil {
		lines.flush()
	}
}

// PID returns the direct child's process ID.
func (p *process) PID() int { return p.pid }

// Stdin returns the child's standard input. Closing it more than once is
// harmless.
func (p *process) Stdin() io.WriteCloser { return p.stdin }

// Stdout returns the read end of the child's standard output.
func (p *process) Stdout() io.Reader { return p.stdout }

// Exited is closed once the direct child has been reaped.
func (p *process) Exited() <-chan struct{} { return p.exited }

// ExitStatus reports how the child ended, in os.ProcessState's words, or
// "" before it has been reaped.
func (p *process) ExitStatus() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exitStatus
}

// ExitCode is the child's exit code, or -1 when it was signalled or has
// not been reaped.
func (p *process) ExitCode() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exitCode
}

// StderrTail returns the last bytes (at most 8 KiB) written to standard
// error and whether earlier bytes were cut off.
//
// Once the child has exited, it first waits up to stderrSettle for the
// copier to reach end of file, so a runtime that wrote its last words and
// exited is reported whole (a descendant holding stderr only delays this
// by the bound).
func (p *process) StderrTail() ([]byte, bool) {
	select {
	case <-p.exited:
		select {
		case <-p.copierDone:
		case <-time.After(stderrSettle):
		}
	default:
	}
	return p.tail.Tail()
}

// stderrSettle bounds StderrTail's wait for the end of standard error.
const stderrSettle = 250 * time.Millisecond

// Terminate sends SIGTERM to the process group. A group that no longer
// exists is not an error.
func (p *process) Terminate() error {
	if err := terminateGroup(p.pgid); err != nil {
		return fmt.Errorf("localexec: terminate process group %d: %w", p.pgid, err)
	}
	return nil
}

// Kill sends SIGKILL to the process group and re-sends it every
// killResendInterval until no live member remains or killWindow has
// passed. Zombies count as gone. Survivors after the window are logged
// at Warn and reported in the error.
func (p *process) Kill() error {
	deadline := time.Now().Add(killWindow)
	for {
		if err := killGroup(p.pgid); err != nil {
			return fmt.Errorf("localexec: kill process group %d: %w", p.pgid, err)
		}
		survivors := groupSurvivors(p.pgid)
		if len(survivors) == 0 {
			return nil
		}
		if !time.Now().Before(deadline) {
			p.logger.Warn("process group survived force kill",
				slog.Int("pgid", p.pgid), slog.Any("survivors", survivors))
			return fmt.Errorf("localexec: process group %d survived SIGKILL for %s: pids %v",
				p.pgid, killWindow, survivors)
		}
		time.Sleep(killResendInterval)
	}
}

// CloseStdout closes the read end of standard output, unblocking a pending
// read even while a descendant holds the write end. Later calls return the
// first call's result.
func (p *process) CloseStdout() error {
	p.stdoutOnce.Do(func() { p.stdoutErr = p.stdout.Close() })
	return p.stdoutErr
}

// closeStderr closes the read end of standard error once.
func (p *process) closeStderr() error {
	p.stderrOnce.Do(func() { p.stderrErr = p.stderr.Close() })
	return p.stderrErr
}

// Release closes standard input, drains standard error for up to
// stderrDrainBound (then closes it, since a descendant may hold it open),
// waits up to reapBound for the reaper, and closes every remaining pipe.
// It never blocks indefinitely. Later calls return the first call's
// result.
func (p *process) Release() error {
	p.releaseOnce.Do(func() { p.releaseErr = p.release() })
	return p.releaseErr
}

func (p *process) release() error {
	var errs []error
	if err := p.stdin.Close(); err != nil {
		errs = append(errs, fmt.Errorf("localexec: close stdin: %w", err))
	}

	drain := time.NewTimer(stderrDrainBound)
	select {
	case <-p.copierDone:
	case <-drain.C:
		// A descendant still holds standard error; stop waiting for it.
		_ = p.closeStderr()
		<-p.copierDone
	}
	drain.Stop()

	reap := time.NewTimer(reapBound)
	select {
	case <-p.reaperDone:
	case <-reap.C:
		p.logger.Warn("agent process not reaped at release", slog.Int("pid", p.pid))
		errs = append(errs, fmt.Errorf("localexec: process %d had not exited at release", p.pid))
	}
	reap.Stop()

	if err := p.CloseStdout(); err != nil && !errors.Is(err, os.ErrClosed) {
		errs = append(errs, fmt.Errorf("localexec: close stdout: %w", err))
	}
	if err := p.closeStderr(); err != nil && !errors.Is(err, os.ErrClosed) {
		errs = append(errs, fmt.Errorf("localexec: close stderr: %w", err))
	}
	return errors.Join(errs...)
}

// stdinPipe is the write end of the child's standard input; its Close is
// idempotent so that the caller's close step and Release can both run.
type stdinPipe struct {
	f    *os.File
	once sync.Once
	err  error
}

// Write writes to the child's standard input.
func (s *stdinPipe) Write(b []byte) (int, error) { return s.f.Write(b) }

// SetWriteDeadline bounds the next writes, so a runtime that stops reading
// its input cannot block a writer forever.
func (s *stdinPipe) SetWriteDeadline(t time.Time) error { return s.f.SetWriteDeadline(t) }

// Close closes the write end once; later calls return the first result.
func (s *stdinPipe) Close() error {
	s.once.Do(func() { s.err = s.f.Close() })
	return s.err
}

// lineLogger logs standard-error lines at Debug. Only the copier goroutine
// uses it.
type lineLogger struct {
	logger *slog.Logger
	pid    int
	buf    []byte
	cut    bool
}

// Write splits b into lines and logs each complete one.
func (l *lineLogger) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			l.add(b)
			break
		}
		l.add(b[:i])
		l.flush()
		b = b[i+1:]
	}
	return n, nil
}

func (l *lineLogger) add(b []byte) {
	if room := maxLoggedStderrLine - len(l.buf); len(b) > room {
		b = b[:room]
		l.cut = true
	}
	l.buf = append(l.buf, b...)
}

// flush logs the pending line, if any.
func (l *lineLogger) flush() {
	line := bytes.TrimRight(l.buf, "\r")
	if len(line) > 0 || l.cut {
		l.logger.Debug("agent stderr line", slog.Int("pid", l.pid),
			slog.String("line", string(line)), slog.Bool("cut", l.cut))
	}
	l.buf = l.buf[:0]
	l.cut = false
}
