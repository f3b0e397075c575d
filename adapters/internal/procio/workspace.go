package procio

import (
	"fmt"
	"os"

	"github.com/acpdrive/acpdrive/domain"
)

// CheckLocalWorkspace checks the workspace of a launch on this machine
// (docs/behaviour.md#start-up, step 1): the path as
// domain.CheckLocalWorkspacePath checks it, then an existing directory.
// The error is a *domain.AgentError of kind invalid_workspace_cwd.
func CheckLocalWorkspace(dir string) error {
	if err := domain.CheckLocalWorkspacePath(dir); err != nil {
		return err
	}
	info, err := os.Stat(dir)
	if err != nil {
		// Anything that keeps the path from being inspected (ENOENT,
		// ENOTDIR on a parent, EACCES) leaves no directory to run in; the
		// cause tells which.
		return domain.WrapError(domain.KindInvalidWorkspaceCWD, domain.MsgWorkspaceMissing, err)
	}
	if !info.IsDir() {
		return domain.WrapError(domain.KindInvalidWorkspaceCWD, domain.MsgWorkspaceNotDir,
			fmt.Errorf("workspace %q", dir))
	}
	return nil
}
