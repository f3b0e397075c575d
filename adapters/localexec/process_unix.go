//go:build unix

package localexec

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"
)

// platformCheck reports whether this platform can launch a process group.
func platformCheck() error { return nil }

// sysProcAttr places the child in a new process group whose ID is its PID.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// terminateGroup sends SIGTERM to every member of the group.
func terminateGroup(pgid int) error { return signalGroup(pgid, syscall.SIGTERM) }

// killGroup sends SIGKILL to every member of the group.
func killGroup(pgid int) error { return signalGroup(pgid, syscall.SIGKILL) }

// signalGroup signals the group; a group that no longer exists is not an
// error.
func signalGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		// kill(-1) would reach every process this user may signal, and
		// kill(0) our own group.
		return fmt.Errorf("refusing to signal process group %d", pgid)
	}
	err := syscall.Kill(-pgid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// groupSurvivors returns the live members of the group, nil when none.
// On Linux it reads /proc and treats zombies as gone: an orphan whose
// parent died is reparented to init, which may never reap it. Elsewhere
// it asks the kernel whether any member exists (zombies included) and, not
// being able to list them, reports the group ID itself as the survivor.
func groupSurvivors(pgid int) []int {
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
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // exited while we looked
		}
		state, pg, ok := parseProcStat(data)
		if !ok || pg != pgid || state == 'Z' || state == 'X' {
			continue
		}
		members = append(members, pid)
	}
	return members, true
}

// parseProcStat extracts the state and process group from the contents of
// /proc/<pid>/stat: "pid (comm) state ppid pgrp ...". comm may itself hold
// spaces and parentheses, so the fields are read after its last ')'.
func parseProcStat(data []byte) (state byte, pgrp int, ok bool) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, false
	}
	fields := bytes.Fields(data[i+1:])
	if len(fields) < 3 || len(fields[0]) != 1 {
		return 0, 0, false
	}
	pg, err := strconv.Atoi(string(fields[2]))
	if err != nil {
		return 0, 0, false
	}
	return fields[0][0], pg, true
}
