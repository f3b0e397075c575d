//go:build unix

package sshcontract

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/proctest"
	"github.com/acpdrive/acpdrive/internal/testsupport/sshtest"
	"github.com/acpdrive/acpdrive/refagent"
)

type startFunc func(t *testing.T, opts ContractOptions, command []string, mod func(*app.Options)) (*app.Session, error)

// runSandbox checks docs/behaviour.md#sandbox over SSH: the sandbox is
// built on the remote host (a write outside the workspace is refused,
// one inside is made, a daemonized process ends with the session), and a
// remote host without bubblewrap refuses the start.
func runSandbox(t *testing.T, srv *sshtest.Server, agent string, start startFunc, stop func(*testing.T, *app.Session), noRemote func(*testing.T)) {
	t.Run("sandbox confines the remote runtime", func(t *testing.T) {
		if _, err := exec.LookPath("bwrap"); err != nil {
			t.Skip("bubblewrap (bwrap) is not installed on the test host")
		}
		token := randomToken(t)
		scriptPath := filepath.Join(srv.BinDir, "sandbox-"+token+".json")
		writeSandboxScript(t, scriptPath, token)
		// A directory the remote account may write, outside the workspace.
		outsideDir := filepath.Join(srv.Dir, "outside-"+token)
		if err := os.Mkdir(outsideDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(outsideDir, srv.UID, -1); err != nil && os.Geteuid() == 0 {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.RemoveAll(outsideDir) })
		var mu sync.Mutex
		var text strings.Builder
		s, err := start(t, ContractOptions{}, []string{agent, "agent", "--script", scriptPath}, func(o *app.Options) {
			o.Settings.Sandbox = domain.Sandbox{Enabled: true}
			o.OnAgentText = func(_, chunk string) {
				mu.Lock()
				defer mu.Unlock()
				text.WriteString(chunk)
			}
		})
		if err != nil {
			t.Fatalf("start: %v\nsshd: %s", err, srv.Log())
		}
		turn := func(prompt string) {
			t.Helper()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			r := s.Turn(ctx, prompt)
			if r.Outcome != domain.OutcomeCompleted {
				t.Fatalf("turn %q: %v %s", prompt, r.Outcome, r.Message())
			}
		}
		outside := filepath.Join(outsideDir, "outside.txt")
		inside := filepath.Join(srv.Workspace, "inside-"+token+".txt")
		turn("#write " + outside)
		turn("#write " + inside)
		turn("#daemon")
		mu.Lock()
		got := text.String()
		mu.Unlock()
		if !strings.Contains(got, "writeFile "+outside+": error") {
			t.Errorf("the write outside the workspace was not refused: %q", got)
		}
		if _, err := os.Stat(outside); err == nil {
			t.Errorf("a write outside the workspace was made: %s", outside)
		}
		if data, err := os.ReadFile(inside); err != nil || string(data) != "written" {
			t.Errorf("the write inside the workspace was not made: %q %v", data, err)
		}
		if !strings.Contains(got, "daemon started") {
			t.Errorf("the daemon did not start: %q", got)
		}
		stop(t, s)
		proctest.WaitCmdlineGone(t, token, 15*time.Second)
		noRemote(t)
	})

	t.Run("a remote host without bwrap refuses the sandbox", func(t *testing.T) {
		// The remote PATH is this one, forwarded (ssh_pass_env): a
		// directory holding only ssh.
		dir := t.TempDir()
		if ssh, err := exec.LookPath("ssh"); err == nil {
			if err := os.Symlink(ssh, filepath.Join(dir, "ssh")); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("PATH", dir)
		s, err := start(t, ContractOptions{PassEnv: []string{"PATH"}}, []string{agent, "agent"}, func(o *app.Options) {
			o.Settings.Sandbox = domain.Sandbox{Enabled: true}
		})
		if s != nil {
			stop(t, s)
			t.Fatal("a sandboxed session started on a host without bwrap")
		}
		var ae *domain.AgentError
		if !errors.As(err, &ae) || !strings.Contains(ae.Message, domain.MsgSandboxRemoteNoBwrap) {
			t.Fatalf("start: %v, want the remote refusal %q", err, domain.MsgSandboxRemoteNoBwrap)
		}
		noRemote(t)
	})
}

// writeSandboxScript writes the reference-agent script of the sandbox
// checks: turn "write" writes the file its argument names, turn "daemon"
// leaves a daemonized shell whose command line carries token.
func writeSandboxScript(t *testing.T, path, token string) {
	t.Helper()
	s := refagent.Script{
		Name: "sandbox",
		Turns: map[string]*refagent.Turn{
			"write": {Steps: []refagent.Step{
				{Step: refagent.StepWriteFile, FromArgument: true, Text: "written"},
				{Step: refagent.StepStop},
			}},
			"daemon": {Steps: []refagent.Step{
				{Step: refagent.StepDaemon, Command: []string{"sh", "-c", "sleep 600; : " + token}},
				{Step: refagent.StepStop},
			}},
		},
	}
	data, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func randomToken(t *testing.T) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "acpdrive-daemon-" + hex.EncodeToString(b)
}
