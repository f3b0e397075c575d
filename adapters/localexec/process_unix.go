//go:build unix

package localexec

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// platformCheck reports whether this platform can launch a process group.
func platformCheck() error { return nil }

// sysProcAttr places the child in a new process group whose ID is its PID.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// unixSignal maps a teardown signal to its Unix signal.
func unixSignal(sig sigKind) syscall.Signal {
	if sig == sigKill {
		return syscall.SIGKILL
	}
	return syscall.SIGTERM
}

// osSignal is sig as os.Process.Signal takes it.
func osSignal(sig sigKind) os.Signal { return unixSignal(sig) }

// exitSignal names the signal that ended the process in
// syscall.Signal.String's words ("killed", "terminated"), "" when it
// exited.
func exitSignal(state *os.ProcessState) string {
	ws, ok := state.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return ""
	}
	return ws.Signal().String()
}

// signalGroup signals the group; a group that no longer exists is not an
// error.
func signalGroup(pgid int, sig sigKind) error {
	if pgid <= 1 {
		// kill(-1) would reach every process this user may signal, and
		// kill(0) our own group.
		return fmt.Errorf("refusing to signal process group %d", pgid)
	}
	err := syscall.Kill(-pgid, unixSignal(sig))
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// groupSurvivors returns the live members of the group, nil when none.
// A group the kernel knows no member of costs one signal-0 check. Else,
// on Linux, it reads /proc and treats zombies as gone: an orphan whose
// parent died is reparented to init, which may never reap it. Elsewhere
// it asks the kernel whether any member exists (zombies included) and, not
// being able to list them, reports the group ID itself as the survivor.
func groupSurvivors(pgid int) []int {
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return nil // no member at all, zombies included: nothing to read
	}
	if members, ok := procGroupMembers(pgid); ok {
		return members
	}
	if err := syscall.Kill(-pgid, 0); errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return []int{pgid}
}

// procGroupMembers lists the non-zombie processes whose process group is
// pgid. ok is false when /proc cannot be used.
func procGroupMembers(pgid int) (members []int, ok bool) {
	if runtime.GOOS != "linux" {
		return nil, false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		st, ok := readProcStat(pid)
		if !ok || st.pgrp != pgid || st.gone() {
			continue // exited while we looked, or not a member
		}
		members = append(members, pid)
	}
	return members, true
}

// readProcStat reads and parses /proc/<pid>/stat.
func readProcStat(pid int) (procStat, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	return parseProcStat(data)
}

// processAlive reports whether pid is a live process: on Linux one that
// is not a zombie, elsewhere one that signal 0 reaches.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if runtime.GOOS == "linux" {
		if st, ok := readProcStat(pid); ok {
			return !st.gone()
		}
		if _, err := os.Stat("/proc/self"); err == nil {
			return false // /proc works and the process is not in it
		}
	}
	return syscall.Kill(pid, 0) == nil
}

// commandName returns the process's command name from /proc, "" when it
// cannot be read.
func commandName(pid int) string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(data), "\n")
}
