//go:build interop

package interop

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// The session configuration on today's releases
// (docs/behaviour.md#session-configuration): the asking mode makes the
// runtime ask, acpdrive refuses, nothing is written; a model, a system
// prompt and a continuation keep what was asked for.

// withSessionConfig sets the session configuration of a library session.
func withSessionConfig(c domain.SessionConfig) optFn {
	return func(o *app.Options) { o.Settings.Session = c }
}

// askingRow is one current release in the mode that asks for permission,
// and the tool call its fake model makes.
type askingRow struct {
	row  string
	rig  func(t testing.TB, row string) (*rig, *fakes.Server)
	mode string
	tool func(r *rig) *fakes.ToolCall
	// titleMarker is a phrase of the side call that names the session,
	// answered aside so that it never takes a scripted reply.
	titleMarker string
}

func askingRows() []askingRow {
	return []askingRow{
		{row: "claude-current", rig: claudeRigOf, mode: "default", titleMarker: "You are naming a coding session", tool: func(*rig) *fakes.ToolCall {
			return &fakes.ToolCall{ID: "toolu_interop_1", Name: "Bash", Args: map[string]any{"command": "echo interop > out.txt", "description": "Write out.txt"}}
		}},
		{row: "codex-current", rig: codexRigOf, mode: "read-only", titleMarker: "generate a very short title for a conversation", tool: func(r *rig) *fakes.ToolCall {
			return &fakes.ToolCall{ID: "call_interop_1", Name: "exec_command", Args: map[string]any{
				"cmd": "echo interop > out.txt", "workdir": r.workspace,
				"sandbox_permissions": "require_escalated", "justification": "write out.txt",
			}}
		}},
	}
}

// TestAskingModeRefusesTheWrite: with the mode that asks, the model's
// write reaches acpdrive as a permission request, acpdrive refuses it, and
// nothing is written. The session's mode is the one asked for.
func TestAskingModeRefusesTheWrite(t *testing.T) {
	t.Parallel()
	for _, c := range askingRows() {
		t.Run(c.row, func(t *testing.T) {
			r, srv := c.rig(t, c.row)
			srv.Aside(c.titleMarker, fakes.TextReply(fakes.Usage{Input: 50, Output: 4}, "Write a file"))
			srv.Script(
				fakes.Reply{Text: []string{"Let me write the file."}, Tool: c.tool(r), Usage: fakes.Usage{Input: 100, Output: 9}},
				fakes.TextReply(fakes.Usage{Input: 130, Output: 6}, "I did not ", "write the file."),
			)
			srv.SetFallback(fakes.TextReply(fakes.Usage{Input: 10, Output: 2}, "ok"))
			sess := r.mustStart(withSessionConfig(domain.SessionConfig{Mode: c.mode}))
			assert.Equal(t, c.mode, sess.Posture().Mode)
			res := r.turn(sess, "write interop into out.txt")
			t.Logf("%s outcome: %s %s", c.row, res.Outcome, res.Message())
			t.Logf("%s posture: %s", c.row, sess.Posture().Text())

			perm, ok := r.wire.request("session/request_permission")
			require.True(t, ok, "the permission request reached acpdrive:\n%s", r.wire.String())
			answer, ok := r.wire.answerTo(perm.ID)
			require.True(t, ok, "the permission request was answered")
			opts, _ := permissionOptions(t, perm)
			var a struct {
				Outcome struct {
					OptionID string `json:"optionId"`
				} `json:"outcome"`
			}
			require.NoError(t, json.Unmarshal(answer.Result, &a))
			refusedKind := ""
			for _, o := range opts {
				if id, kind, _ := strings.Cut(o, "="); id == a.Outcome.OptionID {
					refusedKind = kind
				}
			}
			assert.Equal(t, "reject_once", refusedKind, "acpdrive refused: %s among %v", answer.Result, opts)
			r.stop(sess)
			assertNotWritten(t, r)
			// The mode was set before the prompt, through the option.
			methods := r.wire.methodsOut()
			assert.Less(t, indexOfMethod(methods, "session/set_config_option"), indexOfMethod(methods, "session/prompt"), "%v", methods)
		})
	}
}

// TestAskingModeRefusesTheWriteCLI: the same through `acpdrive run
// --mode`: the posture is announced, the request refused, nothing written.
func TestAskingModeRefusesTheWriteCLI(t *testing.T) {
	t.Parallel()
	for _, c := range askingRows() {
		t.Run(c.row, func(t *testing.T) {
			r, srv := c.rig(t, c.row)
			srv.Aside(c.titleMarker, fakes.TextReply(fakes.Usage{Input: 50, Output: 4}, "Write a file"))
			srv.Script(
				fakes.Reply{Text: []string{"Let me write the file."}, Tool: c.tool(r), Usage: fakes.Usage{Input: 100, Output: 9}},
				fakes.TextReply(fakes.Usage{Input: 130, Output: 6}, "I did not ", "write the file."),
			)
			srv.SetFallback(fakes.TextReply(fakes.Usage{Input: 10, Output: 2}, "ok"))
			run := r.cliWith([]string{"--mode", c.mode}, "write interop into out.txt")
			require.NotNil(t, run.Run, "the session started: %s", run.Stderr)
			var posture, refusal bool
			for _, ev := range run.Events {
				if ev.Type != domain.EventNotification {
					continue
				}
				posture = posture || strings.HasPrefix(ev.Message, domain.MsgSessionPosturePrefix+"mode "+c.mode+";")
				refusal = refusal || strings.Contains(ev.Message, "refused a permission request")
			}
			assert.True(t, posture, "the posture was announced: %v", run.shape(r))
			assert.True(t, refusal, "the request was refused: %v", run.shape(r))
			assertNotWritten(t, r)
		})
	}
}

// indexOfMethod is the index of the first m in methods, -1 when absent.
func indexOfMethod(methods []string, m string) int {
	for i, v := range methods {
		if v == m {
			return i
		}
	}
	return -1
}

// systemText is the system text of an Anthropic request, flattened.
func systemText(t *testing.T, call fakes.Request) string {
	t.Helper()
	sys := call.JSON()["system"]
	if s, ok := sys.(string); ok {
		return s
	}
	var b strings.Builder
	blocks, _ := sys.([]any)
	for _, bl := range blocks {
		if m, ok := bl.(map[string]any); ok {
			if s, ok := m["text"].(string); ok {
				b.WriteString(s)
				b.WriteString("\n")
			}
		}
	}
	return b.String()
}

// TestClaudeModelAndSystemPrompt: --model sonnet reaches the fake model
// server as a Sonnet model; a system prompt marker reaches the system text
// after the preset with append and replaces the preset with override.
func TestClaudeModelAndSystemPrompt(t *testing.T) {
	t.Parallel()
	const marker = "ACPDRIVE-SYSTEM-MARKER-21"
	var appendLen int
	for _, mode := range []string{domain.SystemPromptAppend, domain.SystemPromptOverride} {
		t.Run(mode, func(t *testing.T) {
			r, srv := claudeRigOf(t, "claude-current")
			srv.Aside("You are naming a coding session", fakes.TextReply(fakes.Usage{Input: 50, Output: 4}, "Greeting"))
			srv.SetFallback(fakes.TextReply(fakes.Usage{Input: 10, Output: 2}, "Title"))
			srv.Script(fakes.TextReply(fakes.Usage{Input: 100, Output: 5}, "Hello."))
			sess := r.mustStart(withSessionConfig(domain.SessionConfig{Model: "sonnet", SystemPrompt: marker, SystemPromptMode: mode}))
			assert.Equal(t, "sonnet", sess.Posture().Model)
			res := r.turn(sess, "say hello")
			require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
			r.stop(sess)
			calls := srv.ModelCalls()
			require.NotEmpty(t, calls, srv.Describe())
			model, _ := calls[0].JSON()["model"].(string)
			assert.Contains(t, strings.ToLower(model), "sonnet", "the model the fake server was asked for")
			sys := systemText(t, calls[0])
			assert.Contains(t, sys, marker)
			t.Logf("%s: model %q, system text %d characters", mode, model, len(sys))
			if mode == domain.SystemPromptAppend {
				appendLen = len(sys)
				assert.Greater(t, strings.Index(sys, marker), 1000, "append: the marker comes after the preset")
				return
			}
			assert.Less(t, len(sys), 2000, "override: the preset is gone")
			if appendLen > 0 {
				assert.Less(t, len(sys), appendLen)
			}
		})
	}
}

// TestCodexOverrideRefusedBeforeASession: codex-acp advertises the system
// prompt in append mode only; override is refused before any session is
// created, with the modes it offers.
func TestCodexOverrideRefusedBeforeASession(t *testing.T) {
	t.Parallel()
	r, _ := codexRigOf(t, "codex-current")
	_, err := r.start(withSessionConfig(domain.SessionConfig{SystemPrompt: "x", SystemPromptMode: domain.SystemPromptOverride}))
	require.Error(t, err)
	kind, _ := domain.KindOf(err)
	assert.Equal(t, domain.KindAgentNotFound, kind)
	assert.Contains(t, err.Error(), `system prompt mode "override" is not offered; the runtime offers append`)
	assert.NotContains(t, r.wire.methodsOut(), "session/new")

	// The CLI: exit 3, the same message.
	stdout, stderr, code := r.acpdrive(append(append([]string{"run", "--json"}, r.launchFlags()...),
		"--system-prompt", "x", "--system-prompt-mode", "override", "hi")...)
	assert.Equal(t, 3, code, stdout+stderr)
	assert.Contains(t, stdout, `system prompt mode \"override\" is not offered`)
}

// TestResumedSessionKeepsItsMode: a session continued through the route
// the runtime advertises gets its mode again and reports it.
func TestResumedSessionKeepsItsMode(t *testing.T) {
	t.Parallel()
	for _, c := range askingRows() {
		t.Run(c.row, func(t *testing.T) {
			t.Parallel() // its own rig and fake server
			r, srv := c.rig(t, c.row)
			srv.SetFallback(fakes.TextReply(fakes.Usage{Input: 10, Output: 2}, "Noted."))
			cfg := withSessionConfig(domain.SessionConfig{Mode: c.mode})
			sess := r.mustStart(cfg)
			res := r.turn(sess, "remember the word blue")
			require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
			id := sess.ID()
			r.stop(sess)

			// A new creation store stands for another acpdrive process, so
			// a session/load is not held until the UTC minute of the
			// creation has passed (up to a minute of waiting that says
			// nothing about the mode; the hold has tests of its own:
			// TestClaudeLoadHeld, TestGeminiLoadCreationMinute).
			r.creations = app.NewMemoryCreations()
			again := r.mustStart(cfg, resume(id))
			assert.Equal(t, id, again.ID(), "the session was continued")
			assert.NotEqual(t, "session/new", again.Route())
			assert.Equal(t, c.mode, again.Posture().Mode)
			t.Logf("%s continued through %s: %s", c.row, again.Route(), again.Posture().Text())
			res = r.turn(again, "which word?")
			require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
		})
	}
}
