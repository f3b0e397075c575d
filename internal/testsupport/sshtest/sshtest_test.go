//go:build unix

package sshtest

import (
	"strings"
	"testing"
)

func TestServerRunsCommandsAsTheRemoteUser(t *testing.T) {
	s := Start(t)
	out := s.Exec(t, "id -un; pwd")
	if !strings.HasPrefix(out, s.User+"\n") {
		t.Fatalf("remote ran as %q, want %q", out, s.User)
	}
	if !strings.Contains(s.Exec(t, "ls -ld "+s.Workspace), s.User) && !s.sameUser {
		t.Fatal("workspace not owned by the remote user")
	}
	if got := s.KnownHostsLine(s.HostKey); !strings.Contains(got, s.HostKey) {
		t.Fatal(got)
	}
	if left := s.WaitNoRemoteProcs(t, 5e9); len(left) > 0 {
		t.Fatalf("left: %v", left)
	}
}
