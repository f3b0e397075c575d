//go:build unix

package refagent

import "syscall"

// detachedAttr starts a process in a new session.
func detachedAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
