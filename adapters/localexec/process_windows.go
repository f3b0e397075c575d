//go:build windows

package localexec

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/acpdrive/acpdrive/domain"
)

// Windows start-up and teardown (docs/behaviour.md#containment): the child
// is created suspended and in a process group of its own, assigned to a
// Job Object that kills every process in it when its last handle closes,
// and only then resumed. Terminate sends CTRL_BREAK_EVENT to the group;
// Kill terminates the job and the leader.

// Warn texts of docs/behaviour.md#teardown (Windows).
const (
	msgAssignFailed = "process group assignment failed"
	msgResumeFailed = "process resume failed"
)

// jobKillExitCode is the exit code Kill gives the job's processes:
// STATUS_CONTROL_C_EXIT, as docs/behaviour.md#teardown asks.
const jobKillExitCode = 0xC000013A

// stillActive is the exit code GetExitCodeProcess reports for a process
// that is running (STILL_ACTIVE).
const stillActive = 259

// Test hooks; nil outside tests. Tests set them before a Start and clear
// them after it, never concurrently with another Start.
var (
	// hookAssign replaces AssignProcessToJobObject.
	hookAssign func(job, proc windows.Handle) error
	// hookResume replaces the resume of the main thread.
	hookResume func(pid int) error
	// hookBeforeResume runs just before the context is checked ahead of
	// the resume.
	hookBeforeResume func(pid int)
)

// platformProc is what Windows keeps for a started process: the job, or
// none when the assignment failed.
type platformProc struct {
	mu  sync.Mutex
	job windows.Handle // 0 without a job, and after release
}

// platformCheck accepts this platform.
func platformCheck() error { return nil }

// sysProcAttr starts the child suspended and as the root of a new process
// group, whose ID is its PID.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{
		CreationFlags: windows.CREATE_SUSPENDED | windows.CREATE_NEW_PROCESS_GROUP,
	}
}

// startPlatform assigns the suspended child to a new job and resumes it.
// A failed assignment is logged at Warn and the child runs without a job.
// A start whose ctx is done by the time the resume is reached is never
// resumed: the child is terminated and the start ends turn_cancelled. A
// failed resume is logged at Warn, the child is terminated and the start
// ends port_exit. In both failure cases the child has been reaped when
// startPlatform returns.
func startPlatform(ctx context.Context, l *Launcher, cmd *exec.Cmd) (*platformProc, error) {
	pid := cmd.Process.Pid
	pp := &platformProc{}
	job, err := assignJob(pid)
	if err != nil {
		l.logger.Warn(msgAssignFailed, slog.Int("pid", pid), slog.String("error", err.Error()))
	} else {
		pp.job = job
	}

	if hookBeforeResume != nil {
		hookBeforeResume(pid)
	}
	if err := ctx.Err(); err != nil {
		pp.abort(cmd)
		return nil, domain.WrapError(domain.KindTurnCancelled, msgStartCancelled, err)
	}
	resume := resumeMainThread
	if hookResume != nil {
		resume = hookResume
	}
	if err := resume(pid); err != nil {
		l.logger.Warn(msgResumeFailed, slog.Int("pid", pid), slog.String("error", err.Error()))
		pp.abort(cmd)
		return nil, domain.WrapError(domain.KindPortExit, msgStartFailed,
			fmt.Errorf("resume process %d: %w", pid, err))
	}
	return pp, nil
}

// assignJob creates a job that kills its processes when its last handle
// closes and assigns the process pid to it. The process cannot have been
// reaped yet (nothing has waited for it), so its PID still names it.
func assignJob(pid int) (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, fmt.Errorf("create job object: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		_ = windows.CloseHandle(job)
		return 0, fmt.Errorf("set job limits: %w", err)
	}
	proc, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		_ = windows.CloseHandle(job)
		return 0, fmt.Errorf("open process %d: %w", pid, err)
	}
	defer windows.CloseHandle(proc)
	assign := windows.AssignProcessToJobObject
	if hookAssign != nil {
		assign = hookAssign
	}
	if err := assign(job, proc); err != nil {
		_ = windows.CloseHandle(job)
		return 0, fmt.Errorf("assign process %d to its job: %w", pid, err)
	}
	return job, nil
}

// resumeMainThread resumes the threads of process pid; a process created
// suspended has exactly one, its main thread. x/sys offers no
// NtResumeProcess, so the thread is found in a Toolhelp32 snapshot.
func resumeMainThread(pid int) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return fmt.Errorf("thread snapshot: %w", err)
	}
	defer windows.CloseHandle(snap)
	var te windows.ThreadEntry32
	te.Size = uint32(unsafe.Sizeof(te))
	resumed := 0
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != uint32(pid) {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if err != nil {
			return fmt.Errorf("open thread %d: %w", te.ThreadID, err)
		}
		_, err = windows.ResumeThread(th)
		_ = windows.CloseHandle(th)
		if err != nil {
			return fmt.Errorf("resume thread %d: %w", te.ThreadID, err)
		}
		resumed++
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return fmt.Errorf("walk thread snapshot: %w", err)
	}
	if resumed == 0 {
		return fmt.Errorf("no thread of process %d found", pid)
	}
	return nil
}

// abort ends a child that is never resumed, reaps it and closes the job.
func (pp *platformProc) abort(cmd *exec.Cmd) {
	if pp.job != 0 {
		_ = windows.TerminateJobObject(pp.job, jobKillExitCode)
	}
	// The leader too: without a job that is the only way, and with one
	// it is harmless.
	_ = cmd.Process.Kill()
	_, _ = cmd.Process.Wait()
	pp.release()
}

// signalGroup sends CTRL_BREAK_EVENT to the group for sigTerm (which
// needs this process to share a console with it; see the package
// documentation) and terminates the job for sigKill. Without a job, Kill
// reaches the leader only.
func (pp *platformProc) signalGroup(pgid int, sig sigKind) error {
	if sig == sigTerm {
		if pgid <= 0 {
			return nil
		}
		return windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(pgid))
	}
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if pp.job == 0 {
		return nil
	}
	return windows.TerminateJobObject(pp.job, jobKillExitCode)
}

// jobProcessIDs is JOBOBJECT_BASIC_PROCESS_ID_LIST with room for a fixed
// number of IDs.
type jobProcessIDs struct {
	Assigned uint32
	Listed   uint32
	IDs      [1024]uintptr
}

// groupSurvivors lists the live processes of the job; none without one.
func (pp *platformProc) groupSurvivors(int) []int {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if pp.job == 0 {
		return nil
	}
	var list jobProcessIDs
	err := windows.QueryInformationJobObject(pp.job, windows.JobObjectBasicProcessIdList,
		uintptr(unsafe.Pointer(&list)), uint32(unsafe.Sizeof(list)), nil)
	if err != nil && !errors.Is(err, windows.ERROR_MORE_DATA) {
		return nil
	}
	var out []int
	for _, id := range list.IDs[:min(int(list.Listed), len(list.IDs))] {
		if processAlive(int(id)) {
			out = append(out, int(id))
		}
	}
	return out
}

// release closes the job; with KILL_ON_JOB_CLOSE whatever is still in it
// ends now.
func (pp *platformProc) release() {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if pp.job != 0 {
		_ = windows.CloseHandle(pp.job)
		pp.job = 0
	}
}

// signalsLeader reports whether sig also goes to the leader by its PID:
// only the kill, since Windows has no polite signal for one process.
func signalsLeader(sig sigKind) bool { return sig == sigKill }

// osSignal is the signal sent to the leader: the only one os.Process
// implements on Windows (TerminateProcess).
func osSignal(sigKind) os.Signal { return os.Kill }

// exitSignal reports no signal: Windows processes end with a code.
func exitSignal(*os.ProcessState) string { return "" }

// processAlive reports whether process pid is running.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return false
	}
	return code == stillActive
}

// commandName returns the base name of process pid's image, or "".
func commandName(pid int) string {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return ""
	}
	defer windows.CloseHandle(h)
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n := uint32(len(buf))
	if err := windows.QueryFullProcessImageName(h, 0, &buf[0], &n); err != nil {
		return ""
	}
	return filepath.Base(windows.UTF16ToString(buf[:n]))
}

// checkProgram refuses a batch file (.bat, .cmd). Windows runs one only
// through cmd.exe, which re-parses the arguments by its own rules and, on
// CTRL_BREAK, asks "Terminate batch job (Y/N)?" on the standard input
// that carries the protocol. The message names the file so the operator
// can run the program it starts instead.
func checkProgram(name, path string) error {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".bat", ".cmd":
		return domain.NewError(domain.KindAgentNotFound, fmt.Sprintf(
			"agent command %q is a batch file (%s), which acpdrive does not run: name the program it starts instead",
			name, filepath.Base(path))).WithReason(domain.ReasonProgramMissing)
	}
	return nil
}
