package domain

import (
	"errors"
	"testing"
)

func TestCheckWorkspacePath(t *testing.T) {
	local := t.TempDir() // absolute in this platform's sense
	tests := []struct {
		name  string
		check func(string) error
		path  string
		msg   string // "" for a path that passes
	}{
		{"local empty", CheckLocalWorkspacePath, "", MsgEmptyWorkspace},
		{"local not UTF-8", CheckLocalWorkspacePath, local + "\xff", MsgWorkspaceNotUTF8},
		{"local relative", CheckLocalWorkspacePath, "w", MsgWorkspaceNotAbsolute},
		{"local absolute", CheckLocalWorkspacePath, local, ""},
		{"remote empty", CheckRemoteWorkspacePath, "", MsgEmptyWorkspace},
		{"remote not UTF-8", CheckRemoteWorkspacePath, "/w\xfe", MsgWorkspaceNotUTF8},
		{"remote relative", CheckRemoteWorkspacePath, "w/x", MsgWorkspaceNotAbsolute},
		{"remote dot", CheckRemoteWorkspacePath, ".", MsgWorkspaceNotAbsolute},
		{"remote drive path is not POSIX-absolute", CheckRemoteWorkspacePath, `C:\w`, MsgWorkspaceNotAbsolute},
		{"remote absolute", CheckRemoteWorkspacePath, "/home/u/w s", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.check(tt.path)
			if tt.msg == "" {
				if err != nil {
					t.Fatalf("%q: %v", tt.path, err)
				}
				return
			}
			var ae *AgentError
			if !errors.As(err, &ae) || ae.Kind != KindInvalidWorkspaceCWD || ae.Message != tt.msg {
				t.Fatalf("%q: %v, want %s %q", tt.path, err, KindInvalidWorkspaceCWD, tt.msg)
			}
		})
	}
}
