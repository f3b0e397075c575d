//go:build !linux

package localexec

import (
	"errors"
	"os"
	"syscall"

	"github.com/acpdrive/acpdrive/domain"
)

// leader is the started runtime's own process, held by its *os.Process:
// its Wait blocks one OS thread per live session on these platforms, and
// its Signal never reaches a later process that reuses the PID.
type leader struct {
	pid  int
	proc *os.Process
}

// requestLeaderHandle asks for nothing here.
func requestLeaderHandle(*syscall.SysProcAttr) *int { return nil }

// newLeader holds the started child by its *os.Process.
func newLeader(proc *os.Process, _ *int) *leader { return &leader{pid: proc.Pid, proc: proc} }

// wait blocks until the leader has exited, reaps it and says how it
// ended. Its Wait reaps as it returns, so forget gets a reap that has
// nothing left to do.
func (l *leader) wait(forget func(reap func())) domain.ExitStatus {
	state, err := l.proc.Wait()
	forget(func() {})
	if err != nil {
		return domain.ExitStatus{Exited: true, Code: -1, Message: "wait failed: " + err.Error()}
	}
	return domain.ExitStatus{Exited: true, Code: state.ExitCode(), Signal: exitSignal(state)}
}

// signal sends sig to the leader; a leader already gone is not an error.
func (l *leader) signal(sig sigKind) error {
	if err := l.proc.Signal(osSignal(sig)); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

// release has nothing to close here.
func (l *leader) release() {}

// startOffMainThread runs start: no walk here lists a thread's children.
func startOffMainThread(start func() error) error { return start() }
