//go:build !windows

package localexec

import (
	"context"
	"os/exec"
)

// platformProc holds what a platform keeps for a started process beyond
// the shared fields. Unix (and any other non-Windows system) keeps nothing: a process's platformProc is nil
// and every method below only forwards to the Unix functions of
// process_unix.go, so the Unix behaviour is that of those functions.
type platformProc struct{}

// startPlatform runs after the child has started. Unix has no step here.
func startPlatform(context.Context, *Launcher, *exec.Cmd) (*platformProc, error) {
	return nil, nil
}

// signalGroup signals the process group.
func (*platformProc) signalGroup(pgid int, sig sigKind) error { return signalGroup(pgid, sig) }

// groupSurvivors lists the group's live members.
func (*platformProc) groupSurvivors(pgid int) []int { return groupSurvivors(pgid) }

// release has nothing to release on Unix.
func (*platformProc) release() {}

// signalsLeader reports whether sig also goes to the leader by its own
// PID: always on Unix.
func signalsLeader(sigKind) bool { return true }

// checkProgram accepts every program lookPath found.
func checkProgram(string, string) error { return nil }
