package domain

import (
	"fmt"
	"path"
	"path/filepath"
	"unicode/utf8"
)

// MsgWorkspaceNotAbsolute is the message for a relative workspace path.
const MsgWorkspaceNotAbsolute = "workspace path is not absolute"

// CheckLocalWorkspacePath checks the workspace path of a launch on this
// machine as a path (docs/behaviour.md#start-up, step 1): non-empty, valid
// UTF-8 (ACP carries paths as JSON strings) and absolute in this
// platform's sense. Whether the directory exists is the launcher's to
// find out. The error is a *AgentError of kind invalid_workspace_cwd.
func CheckLocalWorkspacePath(p string) error { return checkWorkspacePath(p, filepath.IsAbs) }

// CheckRemoteWorkspacePath checks the workspace path of a launch on a
// remote host the way CheckLocalWorkspacePath does, except that the path
// must be POSIX-absolute (it is read by the remote host's shell,
// docs/behaviour.md#ssh), whatever this machine's platform.
func CheckRemoteWorkspacePath(p string) error { return checkWorkspacePath(p, path.IsAbs) }

func checkWorkspacePath(p string, isAbs func(string) bool) error {
	switch {
	case p == "":
		return NewError(KindInvalidWorkspaceCWD, MsgEmptyWorkspace)
	case !utf8.ValidString(p):
		return WrapError(KindInvalidWorkspaceCWD, MsgWorkspaceNotUTF8, fmt.Errorf("workspace %q", p))
	case !isAbs(p):
		return WrapError(KindInvalidWorkspaceCWD, MsgWorkspaceNotAbsolute, fmt.Errorf("workspace %q", p))
	}
	return nil
}
