//go:build unix

package main

import (
	"os"
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
