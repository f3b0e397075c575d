//go:build unix

package sshtest

import (
	"os"
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

// TestStartChangesNoAccount: starting the fixture adds, changes or unlocks
// no account of the machine (.ci/run prepares the remote account; without
// it the fixture logs in as the current user).
func TestStartChangesNoAccount(t *testing.T) {
	files := []string{"/etc/passwd", "/etc/shadow", "/etc/group"}
	read := func() map[string]string {
		out := map[string]string{}
		for _, f := range files {
			if b, err := os.ReadFile(f); err == nil {
				out[f] = string(b)
			}
		}
		return out
	}
	before := read()
	s := Start(t)
	after := read()
	for _, f := range files {
		if before[f] != after[f] {
			t.Errorf("Start changed %s", f)
		}
	}
	if out := s.Exec(t, "id -un"); out != s.User+"\n" {
		t.Errorf("remote ran as %q, want %q", out, s.User)
	}
}
