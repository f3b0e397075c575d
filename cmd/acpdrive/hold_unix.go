//go:build unix

package main

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// detachedAttr starts the holder in a session of its own, so that
// neither a signal to the caller's process group nor the caller's death
// reaches it (docs/behaviour.md#held-sessions).
func detachedAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// ownedByMe reports whether fi belongs to this process's user.
func ownedByMe(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}

// holdersListed: holderAlive tells a running holder here, so held may
// remove the directory of one that is not.
const holdersListed = true

// holderAlive reports whether pid is a running holder of dir: where
// /proc tells a process's command line, it must name dir (a process id a
// dead holder left behind may be another process's now).
func holderAlive(pid int, dir string) bool {
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return false
	}
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		_, noProc := os.Stat("/proc/self")
		return noProc != nil // no /proc: the signal's answer is all there is
	}
	return bytes.Contains(cmdline, []byte(holderSubcommand)) && bytes.Contains(cmdline, []byte(dir))
}

// terminateHolder asks a holder to end its session and exit.
func terminateHolder(pid int) error { return syscall.Kill(pid, syscall.SIGTERM) }
