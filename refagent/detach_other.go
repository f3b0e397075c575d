//go:build !unix

package refagent

import "syscall"

// detachedAttr starts a process as the platform does by default.
func detachedAttr() *syscall.SysProcAttr { return nil }
