//go:build !unix && !windows

package localexec

import (
	"errors"
	"os"
	"syscall"

	"github.com/acpdrive/acpdrive/domain"
)

// errUnsupported is returned by the group operations on this platform.
// They are unreachable: Start never returns a process here.
var errUnsupported = errors.New("process groups are not supported on this platform yet")

// platformCheck fails every start: this platform has no process-group
// support (Unix and Windows have files of their own).
func platformCheck() error {
	return domain.NewError(domain.KindPortExit, msgPlatformUnsupported)
}

// sysProcAttr returns no attributes on this platform.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// osSignal is the only signal os.Process can send here.
func osSignal(sigKind) os.Signal { return os.Kill }

// exitSignal reports no signal on this platform.
func exitSignal(*os.ProcessState) string { return "" }

// signalGroup is not supported on this platform.
func signalGroup(int, sigKind) error { return errUnsupported }

// groupSurvivors reports none on this platform.
func groupSurvivors(int) []int { return nil }

// processAlive reports nothing alive on this platform.
func processAlive(int) bool { return false }

// commandName knows no names on this platform.
func commandName(int) string { return "" }
