//go:build !unix && !windows

package localexec

import (
	"context"
	"os/exec"
)

// platformProc is never used here: platformCheck fails every start.
type platformProc struct{}

func startPlatform(context.Context, *Launcher, *exec.Cmd) (*platformProc, error) {
	return nil, nil
}

func (*platformProc) signalGroup(pgid int, sig sigKind) error { return signalGroup(pgid, sig) }

func (*platformProc) groupSurvivors(pgid int) []int { return groupSurvivors(pgid) }

func (*platformProc) release() {}

func signalsLeader(sigKind) bool { return true }

func checkProgram(string, string) error { return nil }
