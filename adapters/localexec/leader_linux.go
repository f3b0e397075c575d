//go:build linux

package localexec

import (
	"errors"
	"os"
	"runtime"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/acpdrive/acpdrive/domain"
)

// leader is the started runtime's own process. On Linux it is held by a
// pidfd registered with the Go runtime's poller: the reaper waits for the
// pidfd to become readable (the process has exited) without blocking an
// OS thread, so thousands of live sessions do not cost a thread each, and
// signals go through the pidfd, which never reaches a later process that
// reuses the PID. Without pidfds (kernels before 5.4) it falls back to
// the *os.Process, whose Wait blocks one thread per live session.
type leader struct {
	pid  int
	proc *os.Process // the fallback; nil when fd is set
	fd   *os.File    // the pidfd, non-blocking, in the poller
}

// pidfdUsable reports once whether this kernel has pidfd_open, pidfd
// signals and waitid(P_PIDFD).
var pidfdUsable = sync.OnceValue(func() bool {
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		return false
	}
	defer func() { _ = unix.Close(fd) }()
	// P_PIDFD on a process that is not our child: ECHILD where waitid
	// knows P_PIDFD, EINVAL where it does not.
	err = unix.Waitid(unix.P_PIDFD, fd, nil, unix.WEXITED|unix.WNOHANG, nil)
	return !errors.Is(err, unix.EINVAL)
})

// requestLeaderHandle asks the start for a pidfd of the child, when this
// kernel has usable pidfds, and returns where it will be stored.
func requestLeaderHandle(attr *syscall.SysProcAttr) *int {
	if attr == nil || !pidfdUsable() {
		return nil
	}
	fd := -1
	attr.PidFD = &fd
	return &fd
}

// newLeader holds the started child by its pidfd when the start returned
// one, releasing the *os.Process (which holds a duplicate) so that a
// session costs one descriptor for its process; else by the *os.Process.
func newLeader(proc *os.Process, pidfd *int) *leader {
	if pidfd == nil || *pidfd < 0 {
		return &leader{pid: proc.Pid, proc: proc}
	}
	if err := unix.SetNonblock(*pidfd, true); err != nil {
		_ = unix.Close(*pidfd)
		return &leader{pid: proc.Pid, proc: proc}
	}
	l := &leader{pid: proc.Pid, fd: os.NewFile(uintptr(*pidfd), "pidfd")}
	_ = proc.Release()
	return l
}

// wait blocks until the leader has exited, reaps it and says how it
// ended. The reap runs inside forget (see forgetLeader); without a pidfd,
// os.Process.Wait reaps as it returns and forget follows it. It closes
// the pidfd once the leader is reaped: a signal after that reaches
// nothing.
func (l *leader) wait(forget func(reap func())) domain.ExitStatus {
	if l.fd == nil {
		state, err := l.proc.Wait()
		forget(func() {})
		if err != nil {
			return domain.ExitStatus{Exited: true, Code: -1, Message: "wait failed: " + err.Error()}
		}
		return domain.ExitStatus{Exited: true, Code: state.ExitCode(), Signal: exitSignal(state)}
	}
	defer l.release()
	if err := l.awaitExit(); err != nil {
		forget(func() {})
		return domain.ExitStatus{Exited: true, Code: -1, Message: "wait failed: " + err.Error()}
	}
	// The pidfd is readable: the whole thread group has exited and the
	// leader is a zombie, so this wait returns at once. It waits by PID,
	// which cannot be reused before this very wait reaps it.
	var ws unix.WaitStatus
	var werr error
	forget(func() {
		for {
			_, werr = unix.Wait4(l.pid, &ws, 0, nil)
			if !errors.Is(werr, unix.EINTR) {
				return
			}
		}
	})
	if werr != nil {
		return domain.ExitStatus{Exited: true, Code: -1, Message: "wait failed: " + werr.Error()}
	}
	return waitStatusExit(syscall.WaitStatus(ws))
}

// awaitExit parks the calling goroutine in the poller until the pidfd is
// readable.
func (l *leader) awaitExit() error {
	rc, err := l.fd.SyscallConn()
	if err != nil {
		return err
	}
	return rc.Read(func(fd uintptr) bool {
		for {
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			n, err := unix.Poll(pfd, 0)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			// An error other than EINTR would repeat on every wake-up:
			// let the wait by PID report it.
			return err != nil || n > 0
		}
	})
}

// signal sends sig to the leader; a leader already gone is not an error.
func (l *leader) signal(sig sigKind) error {
	if l.fd == nil {
		if err := l.proc.Signal(osSignal(sig)); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return err
		}
		return nil
	}
	rc, err := l.fd.SyscallConn()
	if err != nil {
		return nil // closed by release: reaped long ago
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.PidfdSendSignal(int(fd), unixSignal(sig), nil, 0)
	}); err != nil {
		return nil // closed by release
	}
	if errors.Is(serr, unix.ESRCH) {
		return nil
	}
	return serr
}

// release closes the pidfd. A signal after it reaches nothing.
func (l *leader) release() {
	if l.fd != nil {
		_ = l.fd.Close()
	}
}

// waitStatusExit is how a reaped process ended, as os.ProcessState would
// tell it: its exit code, or -1 and the signal's name.
func waitStatusExit(ws syscall.WaitStatus) domain.ExitStatus {
	st := domain.ExitStatus{Exited: true, Code: ws.ExitStatus()}
	if ws.Signaled() {
		st.Signal = ws.Signal().String()
	}
	return st
}

// startOffMainThread runs start, which forks the leader, on a fresh
// goroutine, so never on a thread a caller locked: the kernel sends a
// parent-death signal (bwrap --die-with-parent, prctl PR_SET_PDEATHSIG)
// when the thread that forked a process ends, and a locked thread ends
// with its goroutine, while the Go runtime never ends an unlocked one
// (docs/behaviour.md#containment). And on a thread other than the main
// one, as a rule: orphans are reparented to this process's main thread
// (see orphanCandidates), so a walk lists only that thread's children, and
// a leader forked there would lengthen that list. A start that finds
// itself on the main thread stays locked there while a goroutine of its
// own forks: a locked thread runs nothing else, so that goroutine runs on
// another thread. Only the main thread is ever held this way, so this
// costs at most one thread whatever the number of starts; a start that
// moves to the main thread after the check only lengthens the list by
// one.
func startOffMainThread(start func() error) error {
	done := make(chan error, 1)
	go func() { done <- forkOffMainThread(start) }()
	return <-done
}

// forkOffMainThread runs start on the calling goroutine's thread unless it
// is the main one (see startOffMainThread).
func forkOffMainThread(start func() error) error {
	if !pidfdUsable() {
		return start()
	}
	runtime.LockOSThread()
	if unix.Gettid() != unix.Getpid() {
		runtime.UnlockOSThread()
		return start()
	}
	defer runtime.UnlockOSThread()
	done := make(chan error, 1)
	go func() { done <- start() }()
	return <-done
}
