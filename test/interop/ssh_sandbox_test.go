//go:build interop && unix

package interop

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	// Not parallel: t.Setenv (sshtest.CurrentUserEnv) changes the whole test process's environment; and it counts the processes carrying its token on the whole machine.
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
		fakes.Reply{Text: []string{"Starting a daemon."}, Tool: bash("toolu_ssh_2", daemonCommand(token)),
			Usage: fakes.Usage{Input: 110, Output: 9}},
		fakes.Reply{Text: []string{"Editing inside."}, Tool: &fakes.ToolCall{ID: "toolu_ssh_3", Name: "Write",
			Args: map[string]any{"file_path": inside, "content": "edited"}}, Usage: fakes.Usage{Input: 120, Output: 9}},
		fakes.TextReply(fakes.Usage{Input: 130, Output: 6}, "Done."),
	)
	fake.SetFallback(fakes.TextReply(fakes.Usage{Input: 10, Output: 2}, "ok"))

	runSSHSandbox(t, srv, newLauncher, sshSandboxCase{
		command: []string{"env", "HOME=" + home, "PATH=" + os.Getenv("PATH"),
			"ANTHROPIC_BASE_URL=" + fake.URL(), "ANTHROPIC_API_KEY=fake-anthropic-key",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "CLAUDE_CODE_PLUGIN_CACHE_DIR=" + plugins, entry},
		mode: "auto", workspace: workspace, outside: outside, inside: inside, token: token,
		// The runtime's HOME is the test's, not the remote account's: its
		// state directories are named.
		writable: []string{filepath.Join(home, ".claude"), filepath.Join(home, ".claude.json"), plugins},
	})
	for i, call := range fake.ModelCalls() {
		b := string(call.Body)
		if j := strings.LastIndex(b, `"tool_result"`); j >= 0 {
			t.Logf("tool result before call %d: %.400s", i, b[j:])
		}
	}
}

// sshSandboxCase is one remote sandboxed session of TestSSHSandbox*.
type sshSandboxCase struct {
	command                           []string
	mode                              string
	workspace, outside, inside, token string
	writable                          []string
}

// runSSHSandbox starts the session on the remote host under the sandbox,
// runs the one turn the fake model scripted, and checks the outcome.
func runSSHSandbox(t *testing.T, srv *sshtest.Server, newLauncher func(*slog.Logger) ports.Launcher, c sshSandboxCase) {
	r := newRig(t)
	logger := slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg := domain.DefaultSessionSettings()
	// Plain words only (see sshGeminiSession): the runtime's environment
	// through env, the runtime by its path.
	cfg.Command = c.command
	cfg.Hosts = []string{srv.Alias}
	cfg.ReadTimeout = 30 * time.Second
	cfg.StopGrace = 5 * time.Second
	cfg.StallTimeout = 0
	cfg.TurnTimeout = 3 * time.Minute
	cfg.Session.Mode = c.mode
	cfg.Sandbox = domain.Sandbox{Enabled: true, Writable: c.writable}
	opts := app.Options{
		Settings: cfg, Workspace: c.workspace, Clock: sysclock.Clock{}, Logger: logger, OnEvent: r.rec.Add,
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
	_, err = os.Stat(c.outside)
	assert.True(t, os.IsNotExist(err), "the write outside the workspace was made")
	data, err := os.ReadFile(c.inside)
	if assert.NoError(t, err, "the edit inside the workspace was not made") {
		assert.Equal(t, "edited", strings.TrimSpace(string(data)))
	}
	assert.NotEmpty(t, proctest.WithCmdline(c.token), "the daemon did not start: nothing to outlive the session")
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	require.NoError(t, sess.Stop(ctx))
	cancel()
	stopped = true
	proctest.WaitCmdlineGone(t, c.token, 15*time.Second)
	if left := srv.WaitNoRemoteProcs(t, 15*time.Second); len(left) > 0 {
		t.Errorf("remote survivors: %v", left)
	}
}

// TestSSHSandboxCodex: codex-acp 2.6.0 on the "remote host" under the
// sandbox built there, both transports, in agent-full-access (codex's own
// command sandbox off: ours alone confines): the write outside is not
// made, the daemon does not survive Stop, the edit inside is made. Its
// default mode (agent) is not run here: over this SSH fixture codex's own
// sandbox cannot start a command at all, with or without ours ("bwrap:
// execvp codex-linux-sandbox: No such file or directory"; see
// docs/runtimes.md).
func TestSSHSandboxCodex(t *testing.T) {
	// Not parallel: t.Setenv (sshtest.CurrentUserEnv) changes the whole test process's environment; and it counts the processes carrying its token on the whole machine.
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("bubblewrap is not installed: .ci/run installs it")
		}
		t.Skip("bubblewrap (bwrap) is not installed")
	}
	nodePath(t)
	entry := locate(t, "codex-current", "codex-current/node_modules/.bin/codex-acp")
	t.Setenv(sshtest.CurrentUserEnv, "1")
	srv := sshtest.Start(t)
	for _, transport := range []string{"openssh", "native"} {
		for _, mode := range []string{"agent-full-access"} {
			t.Run(transport+"/"+mode, func(t *testing.T) {
				newLauncher := func(logger *slog.Logger) ports.Launcher {
					if transport == "native" {
						return native.New(native.Options{Host: srv.Alias, ConfigFile: srv.ConfigFile, Logger: logger, AgentSocket: native.NoAgent})
					}
					return sshexec.New(sshexec.Options{Host: srv.Alias, ConfigFile: srv.ConfigFile,
						StrictHostKeyChecking: domain.StrictHostKeyAcceptNew, Logger: logger})
				}
				sshSandboxCodex(t, srv, entry, mode, newLauncher)
			})
		}
	}
}

func sshSandboxCodex(t *testing.T, srv *sshtest.Server, entry, mode string, newLauncher func(*slog.Logger) ports.Launcher) {
	fake := fakes.NewOpenAI()
	t.Cleanup(fake.Close)
	base, err := os.MkdirTemp(srv.Dir, "codex-sandbox-")
	require.NoError(t, err)
	codexHome := filepath.Join(base, "codex-home")
	workspace := filepath.Join(base, "workspace")
	outside := filepath.Join(base, "outside", "escaped.txt")
	inside := filepath.Join(workspace, "inside.txt")
	for _, d := range []string{codexHome, workspace, filepath.Dir(outside)} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	writeFile(t, filepath.Join(codexHome, "config.toml"), fmt.Sprintf(`model = %q
model_provider = "fake"

[model_providers.fake]
name = "fake"
base_url = "%s/v1"
wire_api = "responses"
env_key = "FAKE_OPENAI_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[projects.%q]
trust_level = "trusted"
`, codexModel, fake.URL(), workspace))
	token := sandboxToken(t)
	t.Cleanup(func() {
		for _, pid := range proctest.WithCmdline(token) {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
	})
	fake.Aside(codexTitleMarker, fakes.TextReply(fakes.Usage{Input: 50, Output: 4}, "Sandbox"))
	exec := func(id, command string) *fakes.ToolCall {
		return &fakes.ToolCall{ID: id, Name: "exec_command", Args: map[string]any{"cmd": command, "workdir": workspace}}
	}
	fake.Script(
		fakes.Reply{Text: []string{"Writing outside."}, Tool: exec("call_ssh_1", "echo escaped > "+outside), Usage: fakes.Usage{Input: 100, Output: 9}},
		fakes.Reply{Text: []string{"Starting a daemon."}, Tool: exec("call_ssh_2", daemonCommand(token)),
			Usage: fakes.Usage{Input: 110, Output: 9}},
		fakes.Reply{Text: []string{"Editing inside."}, Tool: exec("call_ssh_3", "printf edited > "+inside), Usage: fakes.Usage{Input: 120, Output: 9}},
		fakes.TextReply(fakes.Usage{Input: 130, Output: 6}, "Done."),
	)
	fake.SetFallback(fakes.TextReply(fakes.Usage{Input: 10, Output: 2}, "ok"))
	runSSHSandbox(t, srv, newLauncher, sshSandboxCase{
		command: []string{"env", "HOME=" + base, "PATH=" + os.Getenv("PATH"), "CODEX_HOME=" + codexHome,
			"FAKE_OPENAI_API_KEY=fake-openai-key", entry},
		mode: mode, workspace: workspace, outside: outside, inside: inside, token: token,
		writable: []string{codexHome},
	})
	for i, call := range fake.ModelCalls() {
		b := string(call.Body)
		if j := strings.LastIndex(b, "function_call_output"); j >= 0 {
			t.Logf("tool output before call %d: %.300s", i, b[j:])
		}
	}
}
