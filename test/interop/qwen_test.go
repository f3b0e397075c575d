//go:build interop

package interop

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/qwen_measure"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// Qwen Code 0.24.4 (@qwen-code/qwen-code, `qwen --acp`) against the fake
// Chat Completions server, offline.

const qwenModel = "fake-qwen-model"

// qwenRig runs Qwen Code in a network namespace of its own with an
// OpenAI key (no login), no self-relaunch, usage statistics off (their
// only outbound traffic), the managed-memory and follow-up-suggestion
// calls off (each would take a model call after a turn), and no retries
// of its own on top of the client's; extra words go after --acp.
func qwenRig(t *testing.T, args ...string) (*rig, *fakes.Server) {
	nodePath(t)
	r := newRig(t, append([]string{locate(t, "qwen", "qwen/node_modules/.bin/qwen"), "--acp"}, args...)...)
	r.offline()
	srv := r.serve(fakes.NewChat())
	writeFile(t, filepath.Join(r.home, ".qwen", "settings.json"), `{
  "privacy": {"usageStatisticsEnabled": false},
  "memory": {"enableManagedAutoMemory": false, "enableManagedAutoDream": false},
  "ui": {"enableFollowupSuggestions": false},
  "model": {"generationConfig": {"maxRetries": 0}}
}
`)
	r.setenv("OPENAI_BASE_URL", srv.URL()+"/v1")
	r.setenv("OPENAI_API_KEY", "fake-qwen-key")
	r.setenv("OPENAI_MODEL", qwenModel)
	r.setenv("QWEN_CODE_NO_RELAUNCH", "true")
	r.setenv("QWEN_USAGE_STATISTICS_ENABLED", "false")
	logEvidenceAtEnd(t, "qwen", r)
	return r, srv
}

var qwenGaps = gapNotice(domain.CapTokenCounts)

// TestQwenTwoTurns: two turns on one Qwen Code process, through the
// library and through one `acpdrive run` with two prompts; the second
// model call carries the first turn, and no side call is made.
func TestQwenTwoTurns(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, srv *fakes.Server) {
		calls := srv.ModelCalls()
		require.Len(t, calls, 2, srv.Describe())
		for _, c := range calls {
			assert.Equal(t, "/v1/chat/completions", c.Path)
			assert.Equal(t, "Bearer fake-qwen-key", c.Header.Get("Authorization"))
			assert.Equal(t, "QwenCode/0.24.4 (linux; x64)", c.Header.Get("User-Agent"))
			body := c.JSON()
			assert.Equal(t, qwenModel, body["model"])
			assert.Equal(t, map[string]any{"include_usage": true}, body["stream_options"])
		}
		assert.Len(t, srv.Requests(), 2, "no side call with managed memory and follow-ups off:\n%s", srv.Describe())
	}
	t.Run("library", func(t *testing.T) {
		r, srv := qwenRig(t)
		twoTurnsLibrary(t, r, srv, qwenGaps)
		check(t, srv)
		// No session/close: Qwen advertises list and resume only.
		assert.Equal(t, []string{"initialize", "session/new", "session/prompt", "session/prompt"}, r.wire.methodsOut())
		resp, ok := r.wire.responseTo("session/new")
		require.True(t, ok)
		var nr struct {
			Modes struct {
				Current string `json:"currentModeId"`
			} `json:"modes"`
		}
		require.NoError(t, json.Unmarshal(resp.Result, &nr))
		assert.Equal(t, "auto", nr.Modes.Current, "Qwen's own default ACP mode")
	})
	t.Run("cli", func(t *testing.T) {
		r, srv := qwenRig(t)
		run := twoTurnsCLI(t, r, srv, qwenGaps)
		assertGaps(t, run, "token counts")
		check(t, srv)
	})
}

// TestQwenToolRefused: with --approval-mode default the model's shell
// call asks (a tool_call first, then session/request_permission id 0);
// acpdrive refuses with "cancel" (reject_once); Qwen fails the call
// ("canceled by the user") and ends the turn with no further model call.
// After the call Qwen sends its own request craft/drainMidTurnQueue,
// which acpdrive answers -32601 and reports as malformed.
func TestQwenToolRefused(t *testing.T) {
	t.Parallel()
	want := []string{
		started,
		qwenGaps,
		keepAlive,
		"notification:Let me write the file.",
		refused,
		"tool_result:execute:error",
		"malformed:" + domain.MsgUnimplementedMethod,
		"turn_completed",
	}
	script := func(srv *fakes.Server) {
		srv.Script(fakes.Reply{
			Text:  []string{"Let me write the file."},
			Tool:  &fakes.ToolCall{ID: "call_qwen_1", Name: "run_shell_command", Args: map[string]any{"command": "echo interop > out.txt", "description": "write out.txt"}},
			Usage: fakes.Usage{Input: 100, Output: 12},
		})
	}
	check := func(t *testing.T, r *rig, srv *fakes.Server) {
		assert.Len(t, srv.ModelCalls(), 1, "the refusal ends the turn: no further model call\n%s", srv.Describe())
		assert.Equal(t, 0, srv.Unscripted())
		assertNotWritten(t, r)
	}
	t.Run("library", func(t *testing.T) {
		r, srv := qwenRig(t, "--approval-mode", "default")
		script(srv)
		sess := r.mustStart()
		libraryTurn(t, r, sess, "write interop into out.txt", completed, want)
		check(t, r, srv)
		perm, ok := r.wire.request("session/request_permission")
		require.True(t, ok)
		assert.Equal(t, "0", string(perm.ID))
		opts, _ := permissionOptions(t, perm)
		assert.Equal(t, []string{"proceed_always_project=allow_always", "proceed_always_user=allow_always", "proceed_once=allow_once", "cancel=reject_once"}, opts)
		answer, ok := r.wire.answerTo(perm.ID)
		require.True(t, ok)
		assert.JSONEq(t, `{"outcome":{"outcome":"selected","optionId":"cancel"}}`, string(answer.Result))
		updates, _ := toolUpdates(t, r)
		assertToolLifecycle(t, updates, "failed")
		drain, ok := r.wire.request("craft/drainMidTurnQueue")
		require.True(t, ok, "Qwen asks craft/drainMidTurnQueue after a tool call")
		answer, ok = r.wire.answerTo(drain.ID)
		require.True(t, ok)
		require.NotNil(t, answer.Error)
		assert.Equal(t, -32601, answer.Error.Code)
	})
	t.Run("cli", func(t *testing.T) {
		r, srv := qwenRig(t, "--approval-mode", "default")
		script(srv)
		cliCompleted(t, r, want, "write interop into out.txt")
		check(t, r, srv)
	})
}

// TestQwenMCPStdio: a stdio MCP server from a WORKFLOW.md's mcp_config
// reaches Qwen on session/new; Qwen starts it, and its tools are deferred
// (not declared to the model): the model calls them through Qwen's
// tool_call tool, {"name":"mcp__<server>__<tool>","arguments":…}. With
// --approval-mode yolo the call runs without asking and the server's
// answer goes back to the model.
func TestQwenMCPStdio(t *testing.T) {
	t.Parallel()
	want := []string{
		started,
		qwenGaps,
		keepAlive,
		"notification:Let me note that.",
		"tool_result:other:ok",
		"malformed:" + domain.MsgUnimplementedMethod,
		keepAlive,
		"notification:Noted.",
		"turn_completed",
	}
	setup := func(t *testing.T) (*rig, *fakes.Server, string, string) {
		r, srv := qwenRig(t, "--approval-mode", "yolo")
		mcpLog := filepath.Join(r.root, "mcp-stdio.jsonl")
		cfg := filepath.Join(r.root, "cfg", "mcp.json")
		writeMCPConfig(t, cfg, map[string]mcpServerDecl{
			"interop": {Command: mcpServerBin(t), Args: []string{"-transport", "stdio"}, Env: map[string]string{"MCPSERVER_LOG": mcpLog}},
		})
		srv.Script(
			fakes.Reply{
				Text: []string{"Let me note that."},
				Tool: &fakes.ToolCall{ID: "call_qwen_mcp", Name: "tool_call", Args: map[string]any{
					"name": "mcp__interop__record_note", "arguments": map[string]any{"text": noteText}}},
				Usage: fakes.Usage{Input: 100, Output: 9},
			},
			fakes.TextReply(fakes.Usage{Input: 130, Output: 6}, "Noted."),
		)
		return r, srv, cfg, mcpLog
	}
	check := func(t *testing.T, srv *fakes.Server, mcpLog string) {
		calls := checkNoteCalled(t, srv, mcpLog)
		assert.False(t, calls[0].BodyContains(`"name":"mcp__interop__record_note"`), "deferred: not declared as a tool")
	}
	t.Run("library", func(t *testing.T) {
		r, srv, cfg, mcpLog := setup(t)
		sess := r.mustStart(withMCP(cfg))
		// Qwen connects its MCP servers in the background after the
		// session exists: the scripted call needs the server's tools
		// listed first (the runtime's timing, not a guarantee of acpdrive).
		require.Eventually(t, func() bool {
			b, _ := os.ReadFile(mcpLog)
			return bytes.Contains(b, []byte(`"method":"tools/list"`))
		}, 60*time.Second, 20*time.Millisecond, "Qwen never listed the MCP server's tools")
		libraryTurn(t, r, sess, "note "+noteText, completed, want)
		check(t, srv, mcpLog)
		updates, permission := toolUpdates(t, r)
		assert.False(t, permission, "yolo: no permission request")
		assertToolLifecycle(t, updates, "completed")
	})
	t.Run("cli workflow", func(t *testing.T) {
		r, srv, cfg, mcpLog := setup(t)
		wf := writeMCPWorkflow(t, filepath.Dir(cfg), r.launchCommand())
		run := cliCompleted(t, r, want, "--workflow", wf, "note "+noteText)
		assertGaps(t, run, "token counts")
		check(t, srv, mcpLog)
	})
}

// TestQwenCancel: cancelled while the model call streams; Qwen answers the
// prompt "cancelled" and calls the model no more.
func TestQwenCancel(t *testing.T) {
	t.Parallel()
	r, srv := qwenRig(t)
	cancelMidTurn(t, r, srv)
}

// TestQwenResume: `acpdrive run --resume` in another process continues a
// saved session through session/load; Qwen replays the history before the
// load's response, and it reaches the model.
func TestQwenResume(t *testing.T) {
	t.Parallel()
	r, srv := qwenRig(t)
	run := resumeAcrossProcesses(t, r, srv)
	assertGaps(t, run, "token counts")
}

// qwenBadRequest is acpdrive's message for Qwen's answer to a model 400:
// -32603 with the API's status and message in data.details.
const qwenBadRequest = `session/prompt error -32603: Internal error (data: {"details":"400 fake bad request"})`

// TestQwenModelHTTPError: a 400 is not retried: the prompt fails -32603
// with the API's status and message in data.details, which acpdrive
// quotes (response_error, retryable). A 500 is retried with Qwen's own
// backoff, whatever retry-after says (with maxRetries 0 it still makes 7
// attempts over about a minute, too slow for the suite): one scripted 500
// is followed by a successful attempt, and acpdrive reports a completed
// turn with the reply of the attempt that succeeded.
func TestQwenModelHTTPError(t *testing.T) {
	t.Parallel()
	wantOutcome := outcome{Outcome: "turn_failed", Kind: "response_error", Message: qwenBadRequest}
	want := []string{started, qwenGaps, "turn_ended_with_error:" + qwenBadRequest}
	badRequest := fakes.Reply{Status: 400, ErrorMessage: "fake bad request"}
	t.Run("400 library", func(t *testing.T) {
		r, srv := qwenRig(t)
		srv.Script(badRequest)
		sess := r.mustStart()
		res, _ := libraryTurn(t, r, sess, "say hello", wantOutcome, want)
		assert.True(t, res.Err.Kind.Retryable())
		assert.Len(t, srv.ModelCalls(), 1, "a 400 is not retried:\n%s", srv.Describe())
	})
	t.Run("400 cli", func(t *testing.T) {
		r, srv := qwenRig(t)
		srv.Script(badRequest)
		run := cliFailed(t, r, wantOutcome, want, "say hello", "never sent")
		assert.True(t, *run.Results[0].Retryable)
		assert.Len(t, srv.ModelCalls(), 1, "a 400 is not retried:\n%s", srv.Describe())
	})
	t.Run("500 then recovery", func(t *testing.T) {
		r, srv := qwenRig(t)
		srv.Script(
			fakes.Reply{Status: 500, ErrorMessage: "fake server error", Header: http.Header{"Retry-After-Ms": {"10"}, "Retry-After": {"0"}}},
			fakes.TextReply(fakes.Usage{Input: 10, Output: 2}, "Recovered."),
		)
		cliCompleted(t, r, textTurn(qwenGaps, "Recovered."), "say hello")
		calls := srv.ModelCalls()
		require.Len(t, calls, 2, "retried once, then answered:\n%s", srv.Describe())
		assert.Equal(t, calls[0].Body, calls[1].Body, "the same request again")
	})
}

// TestQwenProbe: `acpdrive probe` against the raw initialize answer.
func TestQwenProbe(t *testing.T) {
	t.Parallel()
	r, srv := qwenRig(t)
	probeMatchesInitialize(t, r, srv, "qwen", "qwen_chats")
}

// TestQwenUsage: the qwen_chats source (adapters/qwen_measure) reads each
// turn's figures from Qwen's chats journal, exact against the fake
// server's over two turns (the first with two model calls), through the
// library and through `acpdrive run` with the shipped sources.
func TestQwenUsage(t *testing.T) {
	t.Parallel()
	tool := &fakes.ToolCall{ID: "call_qwen_usage", Name: "run_shell_command", Args: map[string]any{"command": "true", "description": "nothing"}}
	t.Run("library", func(t *testing.T) {
		r, srv := qwenRig(t, "--approval-mode", "yolo")
		usageScript(srv, tool)
		src := qwen_measure.New(qwen_measure.Options{Logger: slog.New(slog.NewTextHandler(r.logs, nil)), Home: r.home})
		measuredTwoTurnsLibrary(t, r, srv, src, qwenModel)
	})
	t.Run("cli", func(t *testing.T) {
		r, srv := qwenRig(t, "--approval-mode", "yolo")
		usageScript(srv, tool)
		run := measuredTwoTurnsCLI(t, r, srv, qwenModel)
		assert.Contains(t, run.Stderr, "source=qwen_chats")
	})
}
