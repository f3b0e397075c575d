//go:build unix

package sshexec

import "syscall"

// sysProcAttr places the local ssh in a process group of its own.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// killGroup signals the local process group pgid.
func killGroup(pgid int, sig syscall.Signal) error { return syscall.Kill(-pgid, sig) }
