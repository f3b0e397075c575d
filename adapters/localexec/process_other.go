//go:build !unix

package localexec

import (
	"errors"
	"syscall"

	"github.com/acpdrive/acpdrive/domain"
)

// errUnsupported is returned by the group operations on this platform.
// They are unreachable: Launch never returns a process here.
var errUnsupported = errors.New("process groups are not supported on this platform yet")

// platformCheck fails every launch: this platform has no process-group
// support yet (Windows would need a Job Object and CTRL_BREAK_EVENT).
func platformCheck() error {
	return domain.NewError(domain.KindPortExit, msgPlatformUnsupported)
}

// sysProcAttr returns no attributes on this platform.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// terminateGroup is not supported on this platform.
func terminateGroup(int) error { return errUnsupported }

// killGroup is not supported on this platform.
func killGroup(int) error { return errUnsupported }

// groupSurvivors reports none on this platform.
func groupSurvivors(int) []int { return nil }
