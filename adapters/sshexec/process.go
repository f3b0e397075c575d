package sshexec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// Exit statuses of the local ssh that name a cause (docs/behaviour.md#ssh).
const (
	// ExitConnectionFailed is ssh's own status for a connection failure.
	ExitConnectionFailed = 255
	// ExitCommandNotFound is the remote shell's status for a program not
	// on PATH.
	ExitCommandNotFound = 127
)

// Teardown bounds of the local ssh relay.
const (
	killWindow       = 2 * time.Second
	killResend       = 50 * time.Millisecond
	stderrDrainBound = time.Second
	reapBound        = time.Second
	stderrSettle     = 250 * time.Millisecond
)

// process is the local ssh relay of a remote runtime. It implements
// ports.Process.
type process struct {
	logger *slog.Logger
	host   string
	proc   *os.Process
	pid    int

	stdin  *stdinPipe
	stdout *os.File
	stderr *os.File
	tail   domain.TailBuffer

	exited     chan struct{}
	reaperDone chan struct{}
	copierDone chan struct{}

	mu   sync.Mutex
	exit domain.ExitStatus

	stdoutOnce, stderrOnce, releaseOnce sync.Once
	stdoutErr, stderrErr, releaseErr    error
}

var _ ports.Process = (*process)(nil)

func startSSH(l *Launcher, sshPath string, argv, env []string) (*process, error) {
	var opened []*os.File
	closeAll := func() {
		for _, f := range opened {
			_ = f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			opened = append(opened, r, w)
		}
		return r, w, err
	}
	inR, inW, err := pipe()
	if err != nil {
		return nil, domain.WrapError(domain.KindPortExit, "failed to create stdin pipe", err)
	}
	outR, outW, err := pipe()
	if err != nil {
		closeAll()
		return nil, domain.WrapError(domain.KindPortExit, "failed to create stdout pipe", err)
	}
	errR, errW, err := pipe()
	if err != nil {
		closeAll()
		return nil, domain.WrapError(domain.KindPortExit, "failed to create stderr pipe", err)
	}
	cmd := &exec.Cmd{
		Path:        sshPath,
		Args:        append([]string{"ssh"}, argv...),
		Env:         append(os.Environ(), env...),
		Stdin:       inR,
		Stdout:      outW,
		Stderr:      errW,
		SysProcAttr: sysProcAttr(),
	}
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, domain.WrapError(domain.KindPortExit, "failed to start ssh", err)
	}
	_ = inR.Close()
	_ = outW.Close()
	_ = errW.Close()
	p := &process{
		logger:     l.logger,
		host:       l.opts.Host,
		proc:       cmd.Process,
		pid:        cmd.Process.Pid,
		stdin:      &stdinPipe{f: inW},
		stdout:     outR,
		stderr:     errR,
		exited:     make(chan struct{}),
		reaperDone: make(chan struct{}),
		copierDone: make(chan struct{}),
	}
	go p.copyStderr()
	go p.reap()
	return p, nil
}

func (p *process) reap() {
	defer close(p.reaperDone)
	state, err := p.proc.Wait()
	st := domain.ExitStatus{Exited: true, Code: -1}
	if err != nil {
		st.Message = "wait failed: " + err.Error()
	} else {
		st.Code = state.ExitCode()
		if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			st.Signal = ws.Signal().String()
		}
	}
	if st.Code == ExitConnectionFailed || st.Code == ExitCommandNotFound {
		// The words of ssh (255) or of the remote shell (127) are the
		// last line on standard error; wait briefly for it.
		select {
		case <-p.copierDone:
		case <-time.After(stderrSettle):
		}
		tail, _ := p.tail.Tail()
		st.Message = lastLine(tail)
	}
	// ssh's 255 is its own failure to connect (or to authenticate): the
	// runtime never ran, and another host may be tried
	// (docs/behaviour.md#ssh).
	st.Unreachable = st.Code == ExitConnectionFailed
	p.mu.Lock()
	p.exit = st
	p.mu.Unlock()
	close(p.exited)
}

// lastLine returns the last non-blank line of b, trimmed.
func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if s := strings.TrimSpace(lines[i]); s != "" {
			return s
		}
	}
	return ""
}

func (p *process) copyStderr() {
	defer close(p.copierDone)
	_, _ = io.Copy(&p.tail, p.stderr)
}

// Identity names the local ssh relay and the host.
func (p *process) Identity() ports.Identity { return ports.Identity{PID: p.pid, Host: p.host} }

// Stdin is the local ssh's standard input: the remote runtime's.
func (p *process) Stdin() io.WriteCloser { return p.stdin }

// Stdout is the local ssh's standard output: the remote runtime's.
func (p *process) Stdout() io.Reader { return p.stdout }

// Exited is closed once the local ssh has been reaped.
func (p *process) Exited() <-chan struct{} { return p.exited }

// Exit reports how the local ssh ended: 255 for a connection failure,
// else the remote command's status (127 for a program not found), with
// the last line of standard error as Message for 255 and 127.
func (p *process) Exit() domain.ExitStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exit
}

// StderrTail returns the last 8 KiB of ssh's standard error (which
// carries the remote side's).
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

// Terminate sends SIGTERM to the local ssh's process group. ssh closes
// the connection; the remote command then ends the runtime's process
// group on the host (RemoteCommand).
func (p *process) Terminate() error { return p.signal(syscall.SIGTERM) }

// Kill sends SIGKILL to the local group until nothing of it is alive or
// the window passes; what is left is a *domain.SurvivorsError.
func (p *process) Kill() error {
	deadline := time.Now().Add(killWindow)
	for {
		_ = p.signal(syscall.SIGKILL)
		left := p.groupAlive()
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			var s []domain.Survivor
			for _, pid := range left {
				s = append(s, domain.Survivor{PID: pid})
			}
			p.logger.Warn("local ssh relay processes survived the force kill", slog.Int("pid", p.pid), slog.Any("survivor_pids", left))
			return &domain.SurvivorsError{Survivors: s}
		}
		time.Sleep(killResend)
	}
}

func (p *process) signal(sig syscall.Signal) error {
	var errs []error
	if err := killGroup(p.pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		errs = append(errs, fmt.Errorf("sshexec: signal process group %d: %w", p.pid, err))
	}
	if err := p.proc.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		errs = append(errs, fmt.Errorf("sshexec: signal process %d: %w", p.pid, err))
	}
	return errors.Join(errs...)
}

// groupAlive lists the non-zombie members of the local group (Linux
// /proc); elsewhere it asks whether the group exists.
func (p *process) groupAlive() []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		if killGroup(p.pid, 0) == nil {
			return []int{p.pid}
		}
		return nil
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(data, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(data[i+1:]))
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if g, _ := strconv.Atoi(f[2]); g == p.pid {
			out = append(out, pid)
		}
	}
	return out
}

// CloseStdout closes the read end of standard output.
func (p *process) CloseStdout() error {
	p.stdoutOnce.Do(func() { p.stdoutErr = p.stdout.Close() })
	return p.stdoutErr
}

func (p *process) closeStderr() error {
	p.stderrOnce.Do(func() { p.stderrErr = p.stderr.Close() })
	return p.stderrErr
}

// Release closes stdin, drains stderr (bounded), waits for the reaper
// (bounded) and closes every stream.
func (p *process) Release() error {
	p.releaseOnce.Do(func() {
		var errs []error
		if err := p.stdin.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
			errs = append(errs, fmt.Errorf("sshexec: close stdin: %w", err))
		}
		select {
		case <-p.copierDone:
		case <-time.After(stderrDrainBound):
			_ = p.closeStderr()
			<-p.copierDone
		}
		select {
		case <-p.reaperDone:
		case <-time.After(reapBound):
			errs = append(errs, fmt.Errorf("sshexec: ssh %d had not exited at release", p.pid))
		}
		if err := p.CloseStdout(); err != nil && !errors.Is(err, os.ErrClosed) {
			errs = append(errs, fmt.Errorf("sshexec: close stdout: %w", err))
		}
		if err := p.closeStderr(); err != nil && !errors.Is(err, os.ErrClosed) {
			errs = append(errs, fmt.Errorf("sshexec: close stderr: %w", err))
		}
		p.releaseErr = errors.Join(errs...)
	})
	return p.releaseErr
}

// stdinPipe is the write end of ssh's standard input; Close is idempotent.
type stdinPipe struct {
	f    *os.File
	once sync.Once
	err  error
}

func (s *stdinPipe) Write(b []byte) (int, error)        { return s.f.Write(b) }
func (s *stdinPipe) SetWriteDeadline(t time.Time) error { return s.f.SetWriteDeadline(t) }
func (s *stdinPipe) Close() error {
	s.once.Do(func() { s.err = s.f.Close() })
	return s.err
}
