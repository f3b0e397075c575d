//go:build !unix

package sshexec

import (
	"errors"
	"syscall"
)

// sysProcAttr: no process group of its own off Unix; the local ssh is
// signalled by its own PID only.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// killGroup reports that process groups are a Unix facility here.
func killGroup(int, syscall.Signal) error {
	return errors.New("sshexec: process groups are not supported on this platform")
}
