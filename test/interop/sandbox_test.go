//go:build interop

package interop

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/proctest"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// sandboxRow is one current release in a mode that does not ask, and the
// tool calls its fake model makes: a command writing outside the
// workspace, a command leaving a daemonized process behind, and an edit
// inside the workspace.
type sandboxRow struct {
	name    string // the subtest
	row     string
	rig     func(t testing.TB, row string) (*rig, *fakes.Server)
	measure func(r *rig) optFn
	prepare func(t *testing.T, r *rig)
	mode    string // "" leaves the runtime's default
	// daemonRuns: the daemon runs until Stop (false where the runtime's
	// own command sandbox ends it with its command).
	daemonRuns  bool
	titleMarker string
	shell       func(r *rig, id, command string) *fakes.ToolCall
	edit        func(r *rig, path, content string) *fakes.ToolCall
	// state are the runtime's state directories under the rig's HOME
	// (docs/runtimes.md): the rig gives the runtime a HOME of its own,
	// which is not acpdrive's, so the session names them.
	state func(r *rig) []string
}

func sandboxRows() []sandboxRow {
	return []sandboxRow{
		{
			name: "claude-current", row: "claude-current", rig: claudeRigOf, measure: claudeMeasured,
			// auto, 0.101.0's default: a classifier of its own (model
			// calls, answered aside here as harmless and not blocked)
			// grants every tool call, so nothing is asked at all: the
			// runtime's goodwill, which the sandbox does not depend on.
			// The state directory exists, as on a machine where Claude
			// was run before: the sandbox makes it writable, never
			// creates it (docs/runtimes.md).
			prepare: func(t *testing.T, r *rig) {
				require.NoError(t, os.MkdirAll(filepath.Join(r.home, ".claude"), 0o700))
				for _, srv := range r.servers {
					srv.Aside(claudeClassifierStage1, fakes.TextReply(fakes.Usage{Input: 50, Output: 3}, "<severity>0</severity>"))
					srv.Aside(claudeClassifierStage2, fakes.TextReply(fakes.Usage{Input: 50, Output: 3}, "<block>no</block>"))
				}
			},
			mode: "auto", daemonRuns: true,
			titleMarker: claudeTitleMarker,
			shell: func(_ *rig, id, command string) *fakes.ToolCall {
				return &fakes.ToolCall{ID: id, Name: "Bash", Args: map[string]any{"command": command, "description": "run it"}}
			},
			edit: func(_ *rig, path, content string) *fakes.ToolCall {
				return &fakes.ToolCall{ID: "toolu_sandbox_edit", Name: "Write", Args: map[string]any{"file_path": path, "content": content}}
			},
			state: func(r *rig) []string {
				return []string{filepath.Join(r.home, ".claude"), filepath.Join(r.home, ".claude.json"), filepath.Join(r.root, "claude-plugins")}
			},
		},
		codexSandboxRow("codex-current", "", false),
		// Codex's own sandbox off: what confines its commands is
		// acpdrive's sandbox alone.
		codexSandboxRow("codex-current-full-access", "agent-full-access", true),
	}
}

// codexSandboxRow is codex-acp 2.6.0 in mode ("" its default, agent,
// whose commands run in codex's own sandbox).
func codexSandboxRow(name, mode string, daemonRuns bool) sandboxRow {
	return sandboxRow{
		name: name, row: "codex-current", rig: codexRigOf, measure: codexMeasured, mode: mode, daemonRuns: daemonRuns,
		prepare:     func(*testing.T, *rig) {},
		titleMarker: codexTitleMarker,
		shell: func(r *rig, id, command string) *fakes.ToolCall {
			return &fakes.ToolCall{ID: id, Name: "exec_command", Args: map[string]any{"cmd": command, "workdir": r.workspace}}
		},
		edit: func(r *rig, path, content string) *fakes.ToolCall {
			return &fakes.ToolCall{ID: "call_sandbox_edit", Name: "exec_command", Args: map[string]any{
				"cmd": "printf '%s' '" + content + "' > " + path, "workdir": r.workspace}}
		},
		state: func(r *rig) []string { return []string{filepath.Join(r.root, "codex-home")} },
	}
}

// TestSandboxConfinesNonAskingModes: with the sandbox
// (docs/behaviour.md#sandbox), today's Claude and Codex adapters in modes
// that do not ask are told by the fake model to write outside the
// workspace and to start a background process that outlives its tool
// call: the file is not created, the process does not survive the
// session, the edit inside the workspace is made, and the turn is still
// measured from the runtime's journal.
func TestSandboxConfinesNonAskingModes(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("bubblewrap is not installed: .ci/run installs it")
		}
		t.Skip("bubblewrap (bwrap) is not installed")
	}
	for _, c := range sandboxRows() {
		t.Run(c.name, func(t *testing.T) {
			r, srv := c.rig(t, c.row)
			c.prepare(t, r)
			token := sandboxToken(t)
			outsideDir := filepath.Join(r.root, "outside")
			require.NoError(t, os.MkdirAll(outsideDir, 0o755))
			outside := filepath.Join(outsideDir, "escaped.txt")
			inside := filepath.Join(r.workspace, "inside.txt")
			t.Cleanup(func() {
				for _, pid := range proctest.WithCmdline(token) {
					_ = syscall.Kill(-pid, syscall.SIGKILL)
				}
			})
			srv.Aside(c.titleMarker, fakes.TextReply(fakes.Usage{Input: 50, Output: 4}, "Sandbox"))
			srv.Script(
				fakes.Reply{Text: []string{"Writing outside."}, Tool: c.shell(r, idOf(c.row, 1), "echo escaped > "+outside),
					Usage: fakes.Usage{Input: 100, Output: 9}},
				fakes.Reply{Text: []string{"Starting a daemon."},
					Tool:  c.shell(r, idOf(c.row, 2), daemonCommand(token)),
					Usage: fakes.Usage{Input: 110, Output: 9}},
				fakes.Reply{Text: []string{"Editing inside."}, Tool: c.edit(r, inside, "edited"),
					Usage: fakes.Usage{Input: 120, Output: 9}},
				fakes.TextReply(fakes.Usage{Input: 130, Output: 6}, "Done."),
			)
			srv.SetFallback(fakes.TextReply(fakes.Usage{Input: 10, Output: 2}, "ok"))
			// The rig's TMPDIR is the runtime's temporary directory: the
			// rig passes it through `env -i`, which replaces the
			// sandbox's own, so it is writable too.
			t0 := time.Now()
			sess := r.mustStart(c.measure(r), func(o *app.Options) {
				o.Settings.Session.Mode = c.mode
				o.Settings.Sandbox = domain.Sandbox{Enabled: true, Writable: append(c.state(r), r.tmp)}
			})
			t1 := time.Now()
			res := r.turn(sess, "write outside, start a daemon, edit inside.txt")
			t.Logf("%s start took %s, turn %s", c.row, t1.Sub(t0), time.Since(t1))
			t.Logf("%s outcome: %s %s", c.row, res.Outcome, res.Message())
			require.Equal(t, completed, outcomeOf(res), res.Message())
			assert.NotNil(t, res.Usage, "the turn is measured")
			t.Logf("%s measured by %q", c.row, res.Source)
			assert.NotContains(t, r.logs.String(), "measurement source reported nothing",
				"the runtime's journal is written inside the sandbox and read outside")
			t.Logf("%s posture: %s", c.row, sess.Posture().Text())
			if perm, asked := r.wire.request("session/request_permission"); asked {
				t.Logf("%s asked for permission (refused): %.300s", c.row, perm.Params)
			}

			_, err := os.Stat(outside)
			assert.True(t, os.IsNotExist(err), "the write outside the workspace was made")
			data, err := os.ReadFile(inside)
			if assert.NoError(t, err, "the edit inside the workspace was not made") {
				assert.Equal(t, "edited", strings.TrimSpace(string(data)))
			}
			ran := len(proctest.WithCmdline(token)) > 0
			t.Logf("%s daemon running before Stop: %v", c.row, ran)
			if c.daemonRuns {
				assert.True(t, ran, "the daemon did not start: nothing to outlive the session")
			}
			t.Logf("%s stop took %s", c.row, r.stop(sess))
			proctest.WaitCmdlineGone(t, token, 10*time.Second)
			for i, call := range srv.ModelCalls() {
				t.Logf("%s model call %d: %.300s", c.row, i, lastUserText(call))
				b := string(call.Body)
				if j := strings.LastIndex(b, "function_call_output"); j >= 0 {
					t.Logf("%s tool output before call %d: %.300s", c.row, i, b[j:])
				}
			}
		})
	}
}

// Phrases of the auto mode classifier's two stages (Claude 0.101.0).
const (
	claudeClassifierStage1 = "Stage 1 does NOT apply user intent"
	claudeClassifierStage2 = "Review the classification process"
)

func idOf(row string, n int) string {
	if strings.HasPrefix(row, "claude") {
		return "toolu_sandbox_" + string(rune('0'+n))
	}
	return "call_sandbox_" + string(rune('0'+n))
}

// daemonCommand is the shell command that starts a background process
// carrying token, meant to outlive its tool call. nohup first: the
// runtime runs the tool call in a pseudo-terminal and closes it as soon as
// the shell returns, and a SIGHUP from that hangup reaches setsid's child
// if it has not yet left the terminal's session (a window a loaded machine
// widens): ignored, it cannot kill the daemon before it starts.
func daemonCommand(token string) string {
	return "nohup setsid sh -c 'sleep 600; : " + token + "' </dev/null >/dev/null 2>&1 &"
}

func sandboxToken(t *testing.T) string {
	b := make([]byte, 8)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return "acpdrive-daemon-" + hex.EncodeToString(b)
}
