//go:build interop && unix

package interop

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/sshexec"
	"github.com/acpdrive/acpdrive/adapters/sshexec/native"
	"github.com/acpdrive/acpdrive/adapters/sysclock"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/proctest"
	"github.com/acpdrive/acpdrive/internal/testsupport/sshtest"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// TestSSHSandboxClaude: the Claude agent ACP adapter 0.101.0 in `auto` on
// the "remote host" (the test sshd, as this machine's own user, so the
// installed tree is used in place), under --sandbox built there
// (docs/behaviour.md#sandbox), through both SSH transports: told by the
// fake model to write outside the workspace and to leave a daemon, the
// file is not created, the daemon does not survive Stop, and the edit
// inside the workspace is made.
func TestSSHSandboxClaude(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("bubblewrap is not installed: .ci/run installs it")
		}
		t.Skip("bubblewrap (bwrap) is not installed")
	}
	nodePath(t)
	entry := locate(t, "claude-current", "claude-current/node_modules/.bin/claude-agent-acp")
	t.Setenv(sshtest.CurrentUserEnv, "1")
	srv := sshtest.Start(t)
	for _, transport := range []string{"openssh", "native"} {
		t.Run(transport, func(t *testing.T) {
			newLauncher := func(logger *slog.Logger) ports.Launcher {
				if transport == "native" {
					return native.New(native.Options{Host: srv.Alias, ConfigFile: srv.ConfigFile, Logger: logger, AgentSocket: native.NoAgent})
				}
				return sshexec.New(sshexec.Options{Host: srv.Alias, ConfigFile: srv.ConfigFile,
					StrictHostKeyChecking: domain.StrictHostKeyAcceptNew, Logger: logger})
			}
			sshSandboxClaude(t, srv, entry, newLauncher)
		})
	}
}

func sshSandboxClaude(t *testing.T, srv *sshtest.Server, entry string, newLauncher func(*slog.Logger) ports.Launcher) {
	fake := fakes.NewAnthropic()
	t.Cleanup(fake.Close)
	base, err := os.MkdirTemp(srv.Dir, "claude-sandbox-")
	require.NoError(t, err)
	home := filepath.Join(base, "home")
	workspace := filepath.Join(base, "workspace")
	plugins := filepath.Join(base, "claude-plugins")
	outside := filepath.Join(base, "outside", "escaped.txt")
	inside := filepath.Join(workspace, "inside.txt")
	for _, d := range []string{filepath.Join(home, ".claude"), workspace, filepath.Dir(outside)} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	writeFile(t, filepath.Join(plugins, "blocklist.json"),
		fmt.Sprintf(`{"fetchedAt":%q,"plugins":[]}`, time.Now().UTC().Format(time.RFC3339)))

	token := sandboxToken(t)
	t.Cleanup(func() {
		for _, pid := range proctest.WithCmdline(token) {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
	})
	fake.Aside(claudeTitleMarker, fakes.TextReply(fakes.Usage{Input: 50, Output: 4}, "Sandbox"))
	fake.Aside(claudeSuggestionMarker, fakes.TextReply(fakes.Usage{Input: 50, Output: 2}, "go ahead"))
	fake.Aside(claudeClassifierStage1, fakes.TextReply(fakes.Usage{Input: 50, Output: 3}, "<severity>0</severity>"))
	fake.Aside(claudeClassifierStage2, fakes.TextReply(fakes.Usage{Input: 50, Output: 3}, "<block>no</block>"))
	bash := func(id, command string) *fakes.ToolCall {
		return &fakes.ToolCall{ID: id, Name: "Bash", Args: map[string]any{"command": command, "description": "run it"}}
	}
	fake.Script(
		fakes.Reply{Text: []string{"Writing outside."}, Tool: bash("toolu_ssh_1", "echo escaped > "+outside), Usage: fakes.Usage{Input: 100, Output: 9}},
		fakes.Reply{Text: []string{"Starting a daemon."}, Tool: bash("toolu_ssh_2", "setsid sh -c 'sleep 600; : "+token+"' </dev/null >/dev/null 2>&1 &"),
			Usage: fakes.Usage{Input: 110, Output: 9}},
		fakes.Reply{Text: []string{"Editing inside."}, Tool: &fakes.ToolCall{ID: "toolu_ssh_3", Name: "Write",
			Args: map[string]any{"file_path": inside, "content": "edited"}}, Usage: fakes.Usage{Input: 120, Output: 9}},
		fakes.TextReply(fakes.Usage{Input: 130, Output: 6}, "Done."),
	)
	fake.SetFallback(fakes.TextReply(fakes.Usage{Input: 10, Output: 2}, "ok"))

	r := newRig(t)
	logger := slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg := domain.DefaultSessionSettings()
	// Plain words only (see sshGeminiSession): the runtime's environment
	// through env, the runtime by its path.
	cfg.Command = []string{"env", "HOME=" + home, "PATH=" + os.Getenv("PATH"),
		"ANTHROPIC_BASE_URL=" + fake.URL(), "ANTHROPIC_API_KEY=fake-anthropic-key",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "CLAUDE_CODE_PLUGIN_CACHE_DIR=" + plugins, entry}
	cfg.Hosts = []string{srv.Alias}
	cfg.ReadTimeout = 30 * time.Second
	cfg.StopGrace = 5 * time.Second
	cfg.StallTimeout = 0
	cfg.TurnTimeout = 3 * time.Minute
	cfg.Session.Mode = "auto"
	// The runtime's HOME is the test's, not the remote account's: its
	// state directories are named.
	cfg.Sandbox = domain.Sandbox{Enabled: true, Writable: []string{filepath.Join(home, ".claude"), filepath.Join(home, ".claude.json"), plugins}}
	opts := app.Options{
		Settings: cfg, Workspace: workspace, Clock: sysclock.Clock{}, Logger: logger, OnEvent: r.rec.Add,
		Launcher: &tapLauncher{inner: newLauncher(logger), wire: r.wire}, Creations: r.creations,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	sess, err := app.Start(ctx, opts)
	cancel()
	require.NoError(t, err, "sshd log:\n%s", srv.Log())
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = sess.Stop(context.Background())
		}
	})
	ctx, cancel = context.WithTimeout(context.Background(), 2*time.Minute)
	res := sess.Turn(ctx, "write outside, start a daemon, edit inside.txt")
	cancel()
	require.Equal(t, completed, outcomeOf(res), res.Message())
	if perm, asked := r.wire.request("session/request_permission"); asked {
		t.Logf("asked for permission (refused): %.300s", perm.Params)
	}
	_, err = os.Stat(outside)
	assert.True(t, os.IsNotExist(err), "the write outside the workspace was made")
	data, err := os.ReadFile(inside)
	if assert.NoError(t, err, "the edit inside the workspace was not made") {
		assert.Equal(t, "edited", string(data))
	}
	t.Logf("daemon running before Stop: %v", len(proctest.WithCmdline(token)) > 0)
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	require.NoError(t, sess.Stop(ctx))
	cancel()
	stopped = true
	proctest.WaitCmdlineGone(t, token, 15*time.Second)
	if left := srv.WaitNoRemoteProcs(t, 15*time.Second); len(left) > 0 {
		t.Errorf("remote survivors: %v", left)
	}
}
