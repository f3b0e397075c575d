package sshexec

import (
	"errors"
	"testing"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// TestPrepareRefusesAWorkspaceThatIsNotAnAbsolutePath: the remote
// workspace is checked as a path before anything starts
// (docs/behaviour.md#start-up, step 1): empty, not UTF-8 or relative is
// invalid_workspace_cwd; whether it exists is the remote host's to say.
func TestPrepareRefusesAWorkspaceThatIsNotAnAbsolutePath(t *testing.T) {
	tests := []struct {
		name, workspace, msg string
	}{
		{"empty", "", domain.MsgEmptyWorkspace},
		{"relative", "work/space", domain.MsgWorkspaceNotAbsolute},
		{"dot", ".", domain.MsgWorkspaceNotAbsolute},
		{"not UTF-8", "/w\xff", domain.MsgWorkspaceNotUTF8},
	}
	l := New(Options{Host: "h", SSHPath: "/bin/sh"})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := l.Prepare(ports.LaunchRequest{Command: []string{"agent"}, Workspace: tt.workspace})
			var ae *domain.AgentError
			if !errors.As(err, &ae) || ae.Kind != domain.KindInvalidWorkspaceCWD || ae.Message != tt.msg {
				t.Fatalf("Prepare(%q) = %v, want %s %q", tt.workspace, err, domain.KindInvalidWorkspaceCWD, tt.msg)
			}
		})
	}
	if _, err := l.Prepare(ports.LaunchRequest{Command: []string{"agent"}, Workspace: "/no/such/dir/here"}); err != nil {
		t.Fatalf("an absolute remote path is the remote host's to check: %v", err)
	}
}
