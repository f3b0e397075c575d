package sshexec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/acpdrive/acpdrive/adapters/internal/procio"
	"github.com/acpdrive/acpdrive/adapters/sshexec/internal/remotecmd"
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

// Teardown bounds of the local ssh relay and the remote group.
const (
	killWindow       = 2 * time.Second
	killResend       = 50 * time.Millisecond
	stderrDrainBound = time.Second
	reapBound        = time.Second
	// remoteKillBound bounds the force step's second connection: the
	// connection itself and killWindow of KILL rounds.
	remoteKillBound = killWindow + time.Second
)

// process is the local ssh relay of a remote runtime. It implements
// ports.Process; its streams and exit value are procio's (Exited is closed
// once the local ssh has been reaped).
type process struct {
	*procio.Streams

	l      *Launcher
	logger *slog.Logger
	host   string
	proc   *os.Process
	pid    int

	sshPath string
	env     []string
	group   *remotecmd.PGIDFilter // the remote process group, from standard error

	reaperDone chan struct{}

	releaseOnce sync.Once
	releaseErr  error
}

var _ ports.Process = (*process)(nil)

func startSSH(l *Launcher, sshPath string, argv, env []string) (*process, error) {
	pipes, err := procio.OpenPipes()
	if err != nil {
		return nil, err
	}
	cmd := &exec.Cmd{
		Path:        sshPath,
		Args:        append([]string{"ssh"}, argv...),
		Env:         append(os.Environ(), env...),
		Stdin:       pipes.StdinR,
		Stdout:      pipes.StdoutW,
		Stderr:      pipes.StderrW,
		SysProcAttr: sysProcAttr(),
	}
	if err := cmd.Start(); err != nil {
		pipes.CloseAll()
		return nil, domain.WrapError(domain.KindPortExit, "failed to start ssh", err)
	}
	pipes.CloseChildEnds()
	p := &process{
		l:          l,
		logger:     l.logger,
		host:       l.opts.Host,
		proc:       cmd.Process,
		pid:        cmd.Process.Pid,
		sshPath:    sshPath,
		env:        slices.Clone(env),
		reaperDone: make(chan struct{}),
	}
	p.Streams = pipes.Streams(func(tail io.Writer) io.Writer {
		p.group = &remotecmd.PGIDFilter{W: tail}
		return p.group
	})
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
		p.WaitStderr(procio.StderrSettle)
		tail, _ := p.StderrTail()
		st.Message = lastLine(tail)
	}
	// ssh's 255 is its own failure to connect (or to authenticate): the
	// runtime never ran, and another host may be tried
	// (docs/behaviour.md#ssh).
	st.Unreachable = st.Code == ExitConnectionFailed
	p.SetExit(st)
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

// Identity names the local ssh relay and the host.
func (p *process) Identity() ports.Identity { return ports.Identity{PID: p.pid, Host: p.host} }

// Terminate sends SIGTERM to the local ssh's process group. ssh closes
// the connection; the remote command then ends the runtime's process
// group on the host (remotecmd.RemoteCommand), and Kill makes sure of it.
func (p *process) Terminate() error { return p.signal(syscall.SIGTERM) }

// Kill ends the local relay and the runtime's process group on the
// remote host, at once:
//
//   - SIGKILL to the local group, re-sent until nothing of it is alive or
//     killWindow passes;
//   - on a second connection to the host (the relay's own may be gone),
//     KILL to the remote group, re-sent every 50 ms until it holds
//     nothing but zombies or killWindow passes (remotecmd.KillGroupCommand),
//     the connection and the rounds bounded by remoteKillBound.
//
// What is still alive is returned as a *domain.SurvivorsError: the local
// processes by PID, the remote group by its ID with the host. When the
// remote group's ID never arrived (the launch failed before the remote
// command ran) there is nothing remote to end; when the second connection
// fails, the remote group cannot be looked at and is not reported (the
// remote command's watchdog still ends it once the relay's connection is
// gone), as on the native transport.
func (p *process) Kill() error {
	var local, remote []domain.Survivor
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		remote = p.killRemote()
	}()
	local = p.killLocal()
	wg.Wait()
	survivors := append(local, remote...)
	if len(survivors) == 0 {
		return nil
	}
	p.logger.Warn("agent runtime processes survived the force kill", slog.Int("pid", p.pid),
		slog.String("host", p.host), slog.Int("survivors", len(survivors)))
	return &domain.SurvivorsError{Survivors: survivors}
}

// killLocal SIGKILLs the local group until it is empty or killWindow
// passes, and returns what is left.
func (p *process) killLocal() []domain.Survivor {
	deadline := time.Now().Add(killWindow)
	for {
		_ = p.signal(syscall.SIGKILL)
		left := p.groupAlive()
		if len(left) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			s := make([]domain.Survivor, len(left))
			for i, pid := range left {
				s[i] = domain.Survivor{PID: pid}
			}
			return s
		}
		time.Sleep(killResend)
	}
}

// killRemote runs the remote group's force kill on a second connection
// and returns the group when it survived.
func (p *process) killRemote() []domain.Survivor {
	pg := p.group.PGID()
	if pg <= 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), remoteKillBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.sshPath)
	cmd.Args = append([]string{"ssh"}, p.l.sshArgs(remotecmd.KillGroupCommand(pg, int(killWindow/killResend)))...)
	cmd.Env = append(os.Environ(), p.env...)
	cmd.SysProcAttr = sysProcAttr()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Cancel = func() error {
		_ = killGroup(cmd.Process.Pid, syscall.SIGKILL)
		return cmd.Process.Kill()
	}
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	var ee *exec.ExitError
	code := 0
	switch {
	case errors.As(err, &ee) && ee.ExitCode() != ExitConnectionFailed && ctx.Err() == nil:
		code = ee.ExitCode()
	case err != nil:
		p.logger.Warn("could not reach the remote host to end the runtime's process group",
			slog.String("host", p.host), slog.Int64("remote_pgid", pg), slog.String("error", err.Error()),
			slog.String("ssh_stderr", lastLine(stderr.Bytes())))
		return nil
	}
	return remotecmd.GroupSurvivors(code, pg, p.host)
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

// Release closes stdin, drains stderr (bounded), waits for the reaper
// (bounded) and closes every stream.
func (p *process) Release() error {
	p.releaseOnce.Do(func() {
		if err := p.Streams.Release(p.reaperDone, reapBound, stderrDrainBound, "ssh "+strconv.Itoa(p.pid)); err != nil {
			p.releaseErr = fmt.Errorf("sshexec: %w", err)
		}
	})
	return p.releaseErr
}
