//go:build interop

package interop

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/copilot_measure"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// GitHub Copilot CLI 1.0.102 (@github/copilot, `copilot --acp`, the
// native binary the npm loader would spawn) against the fake Chat
// Completions server, offline and with no GitHub login.

const copilotModel = "fake-copilot-model"

// copilotRig runs Copilot CLI in a network namespace of its own in its
// documented offline mode (no GitHub auth, telemetry, web tools or
// auto-update) with a bring-your-own-key provider: the fake, through
// the default provider type openai and wire API completions.
func copilotRig(t *testing.T, args ...string) (*rig, *fakes.Server) {
	r := newRig(t, append([]string{locate(t, "copilot", "copilot/node_modules/@github/copilot-linux-x64/copilot"), "--acp"}, args...)...)
	r.offline()
	srv := r.serve(fakes.NewChat())
	r.setenv("COPILOT_OFFLINE", "true")
	r.setenv("COPILOT_AUTO_UPDATE", "false")
	r.setenv("COPILOT_PROVIDER_BASE_URL", srv.URL()+"/v1")
	r.setenv("COPILOT_PROVIDER_API_KEY", "fake-copilot-key")
	r.setenv("COPILOT_MODEL", copilotModel)
	logEvidenceAtEnd(t, "copilot", r)
	return r, srv
}

var copilotGaps = gapNotice(domain.CapTokenCounts)

// copilotEvents is Copilot's session-state journal of session id.
func copilotEvents(r *rig, id string) string {
	raw, _ := os.ReadFile(filepath.Join(r.home, ".copilot", "session-state", id, "events.jsonl"))
	return string(raw)
}

// copilotSessionID is the ACP session id of the rig's (first) session.
func copilotSessionID(t *testing.T, r *rig) string {
	t.Helper()
	resp, ok := r.wire.responseTo("session/new")
	require.True(t, ok)
	var nr struct {
		SessionID string `json:"sessionId"`
	}
	require.NoError(t, json.Unmarshal(resp.Result, &nr))
	return nr.SessionID
}

// TestCopilotTwoTurns: two turns on one Copilot process; the second model
// call carries the first turn; acpdrive ends the session with
// session/close. The prompt result's usage is summed over the turn's
// model calls; Copilot writes each call's figures to its session-state
// journal.
func TestCopilotTwoTurns(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, srv *fakes.Server) {
		calls := srv.ModelCalls()
		require.Len(t, calls, 2, srv.Describe())
		for _, c := range calls {
			assert.Equal(t, "/v1/chat/completions", c.Path)
			assert.Equal(t, "Bearer fake-copilot-key", c.Header.Get("Authorization"))
			assert.Equal(t, "user", c.Header.Get("X-Initiator"))
			body := c.JSON()
			assert.Equal(t, copilotModel, body["model"])
			assert.Equal(t, map[string]any{"include_usage": true}, body["stream_options"])
		}
		assert.True(t, calls[0].BodyContains(`<current_datetime>`), "Copilot prefixes the prompt with the date")
		assert.Len(t, srv.Requests(), 2, "no side call:\n%s", srv.Describe())
	}
	t.Run("library", func(t *testing.T) {
		r, srv := copilotRig(t)
		twoTurnsLibrary(t, r, srv, copilotGaps)
		check(t, srv)
		assert.Equal(t, []string{"initialize", "session/new", "session/prompt", "session/prompt", "session/close"}, r.wire.methodsOut())
		id := copilotSessionID(t, r)
		closeAnswered(t, r, id)
		assert.Equal(t, 2, strings.Count(copilotEvents(r, id), `"type":"session.usage_record"`), "one usage record per model call")
	})
	t.Run("cli", func(t *testing.T) {
		r, srv := copilotRig(t)
		run := twoTurnsCLI(t, r, srv, copilotGaps)
		assert.Empty(t, run.Run.CapabilityGaps, "the prompt results' usage measures the turns: token counts is no gap")
		check(t, srv)
	})
}

// TestCopilotToolRefused: the model's bash call asks (a tool_call titled
// with the command's description, then request_permission id 0 with
// allow_once / allow_always / reject_once); acpdrive refuses with
// reject_once; Copilot fails the call ("The user rejected this tool
// call."), says "Operation cancelled by user" and ends the turn with no
// further model call.
func TestCopilotToolRefused(t *testing.T) {
	t.Parallel()
	want := []string{
		started,
		copilotGaps,
		keepAlive,
		"notification:Let me write the file.",
		refused,
		"tool_result:execute:error",
		keepAlive,
		"notification:Info: Operation cancelled by user",
		"turn_completed",
	}
	script := func(srv *fakes.Server) {
		srv.Script(fakes.Reply{
			Text:  []string{"Let me write the file."},
			Tool:  &fakes.ToolCall{ID: "call_copilot_1", Name: "bash", Args: map[string]any{"command": "echo interop > out.txt", "description": "write out.txt"}},
			Usage: fakes.Usage{Input: 100, Output: 12},
		})
	}
	check := func(t *testing.T, r *rig, srv *fakes.Server) {
		assert.Len(t, srv.ModelCalls(), 1, "the refusal ends the turn: no further model call\n%s", srv.Describe())
		assert.Equal(t, 0, srv.Unscripted())
		assertNotWritten(t, r)
	}
	t.Run("library", func(t *testing.T) {
		r, srv := copilotRig(t)
		script(srv)
		sess := r.mustStart()
		libraryTurn(t, r, sess, "write interop into out.txt", completed, want)
		check(t, r, srv)
		perm, ok := r.wire.request("session/request_permission")
		require.True(t, ok)
		assert.Equal(t, "0", string(perm.ID))
		opts, _ := permissionOptions(t, perm)
		assert.Equal(t, []string{"allow_once=allow_once", "allow_always=allow_always", "reject_once=reject_once"}, opts)
		answer, ok := r.wire.answerTo(perm.ID)
		require.True(t, ok)
		assert.JSONEq(t, `{"outcome":{"outcome":"selected","optionId":"reject_once"}}`, string(answer.Result))
		updates, _ := toolUpdates(t, r)
		assertToolLifecycle(t, updates, "failed")
		var failed bool
		for _, m := range r.wire.messages() {
			failed = failed || (m.updateKind() == "tool_call_update" && strings.Contains(string(m.Params), `"code":"rejected"`))
		}
		assert.True(t, failed, "the call fails with Copilot's rejected code")
	})
	t.Run("cli", func(t *testing.T) {
		r, srv := copilotRig(t)
		script(srv)
		cliCompleted(t, r, want, "write interop into out.txt")
		check(t, r, srv)
	})
}

// TestCopilotMCP: Copilot drops every stdio MCP server a client passes on
// session/new (its log: "Rejecting non-http/sse MCP server … from
// client"), though it advertises none of that: acpdrive delivers the
// WORKFLOW.md's stdio server, counts "tool servers" as delivered, the
// server is never started, and the model's call fails "Tool … does not
// exist". A stdio server in Copilot's own $HOME/.copilot/mcp-config.json
// does work (tool <server>-<tool>; Copilot asks before each MCP call, so
// the run allows all tools).
func TestCopilotMCP(t *testing.T) {
	t.Parallel()
	const tool = "interop-record_note"
	setup := func(t *testing.T, args ...string) (*rig, *fakes.Server, string, string) {
		r, srv := copilotRig(t, args...)
		mcpLog := filepath.Join(r.root, "mcp-stdio.jsonl")
		cfg := filepath.Join(r.root, "cfg", "mcp.json")
		writeMCPConfig(t, cfg, map[string]mcpServerDecl{
			"interop": {Command: mcpServerBin(t), Args: []string{"-transport", "stdio"}, Env: map[string]string{"MCPSERVER_LOG": mcpLog}},
		})
		srv.Script(
			fakes.Reply{
				Text:  []string{"Let me note that."},
				Tool:  &fakes.ToolCall{ID: "call_copilot_mcp", Name: tool, Args: map[string]any{"text": noteText}},
				Usage: fakes.Usage{Input: 100, Output: 9},
			},
			fakes.TextReply(fakes.Usage{Input: 130, Output: 6}, "Noted."),
		)
		return r, srv, cfg, mcpLog
	}
	dropped := []string{
		started,
		copilotGaps,
		keepAlive,
		"notification:Let me note that.",
		"tool_result:other:error",
		keepAlive,
		"notification:Noted.",
		"turn_completed",
	}
	// checkDropped: the server never started, and what Copilot told the
	// model instead.
	checkDropped := func(t *testing.T, r *rig, srv *fakes.Server, mcpLog string) {
		assert.Empty(t, readMCPLog(t, mcpLog), "Copilot never starts a stdio server passed on session/new")
		calls := srv.ModelCalls()
		require.Len(t, calls, 2, srv.Describe())
		assert.False(t, calls[0].BodyContains(`"name":"`+tool+`"`), "no MCP tool declared to the model")
		last := lastMessage(t, calls[1])
		assert.Equal(t, "tool", last["role"])
		assert.Contains(t, last["content"], "Tool '"+tool+"' does not exist.")
		var rejected bool
		logs, _ := filepath.Glob(filepath.Join(r.home, ".copilot", "logs", "*"))
		for _, l := range logs {
			raw, _ := os.ReadFile(l)
			rejected = rejected || strings.Contains(string(raw), `Rejecting non-http/sse MCP server "interop" from client`)
		}
		assert.True(t, rejected, "Copilot's log says it rejected the server")
	}
	t.Run("session/new drops stdio: library", func(t *testing.T) {
		r, srv, cfg, mcpLog := setup(t)
		sess := r.mustStart(withMCP(cfg))
		// What acpdrive believes today: the stdio server was delivered.
		assert.Equal(t, []domain.CapabilityLabel{domain.CapTokenCounts}, sess.Capabilities().Gaps())
		libraryTurn(t, r, sess, "note "+noteText, completed, dropped)
		raw, err := json.Marshal(sessionNewMCPServers(t, r))
		require.NoError(t, err)
		assert.JSONEq(t, `[{"name":"interop","command":"`+mcpServerBin(t)+`","args":["-transport","stdio"],"env":[{"name":"MCPSERVER_LOG","value":"`+mcpLog+`"}]}]`, string(raw))
		checkDropped(t, r, srv, mcpLog)
	})
	t.Run("session/new drops stdio: cli workflow", func(t *testing.T) {
		r, srv, cfg, mcpLog := setup(t)
		wf := writeMCPWorkflow(t, filepath.Dir(cfg), r.launchCommand())
		run := cliCompleted(t, r, dropped, "--workflow", wf, "note "+noteText)
		assert.Empty(t, run.Run.CapabilityGaps, "the prompt results' usage measures the turns: token counts is no gap")
		checkDropped(t, r, srv, mcpLog)
	})
	t.Run("the runtime's own mcp-config.json", func(t *testing.T) {
		r, srv, _, mcpLog := setup(t, "--allow-all-tools")
		raw, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"interop": map[string]any{
			"type": "local", "command": mcpServerBin(t), "args": []string{"-transport", "stdio"},
			"env": map[string]string{"MCPSERVER_LOG": mcpLog}, "tools": []string{"*"}}}})
		require.NoError(t, err)
		writeFile(t, filepath.Join(r.home, ".copilot", "mcp-config.json"), string(raw))
		cliCompleted(t, r, []string{
			started,
			copilotGaps,
			keepAlive,
			"notification:Let me note that.",
			"tool_result:other:ok",
			keepAlive,
			"notification:Noted.",
			"turn_completed",
		}, "note "+noteText)
		assert.Equal(t, []string{noteCall}, mcpCalls(readMCPLog(t, mcpLog)), "the MCP server received the call")
		calls := srv.ModelCalls()
		require.Len(t, calls, 2, srv.Describe())
		assert.True(t, calls[0].BodyContains(`"name":"`+tool+`"`), "the MCP tool is declared to the model")
		assert.True(t, calls[1].BodyContains(`noted: `+noteText), "the tool's answer reaches the model")
	})
}

// TestCopilotCancel: cancelled while the model call streams; Copilot
// answers the prompt "cancelled" and calls the model no more.
func TestCopilotCancel(t *testing.T) {
	t.Parallel()
	r, srv := copilotRig(t)
	result := cancelMidTurn(t, r, srv)
	assert.JSONEq(t, `{"stopReason":"cancelled"}`, string(result))
}

// TestCopilotResume: `acpdrive run --resume` in another process continues
// a saved session through session/load; Copilot replays the history
// before the load's response, and it reaches the model.
func TestCopilotResume(t *testing.T) {
	t.Parallel()
	r, srv := copilotRig(t)
	run := resumeAcrossProcesses(t, r, srv)
	assert.Empty(t, run.Run.CapabilityGaps, "the prompt results' usage measures the turns: token counts is no gap")
}

// TestCopilotModelHTTPError: Copilot does not report a failed model call
// as an error. A 400 is not retried: the turn ends end_turn with the text
// "Error: 400 <the API's message>", so acpdrive reports a completed turn
// whose reply is that text (the next prompt runs). A 500 is retried after
// "Info: Request failed due to a transient API error. Retrying..." (5
// retries, at least a second each, whatever retry-after-ms says): one
// scripted 500 is followed by a successful attempt.
func TestCopilotModelHTTPError(t *testing.T) {
	t.Parallel()
	t.Run("400", func(t *testing.T) {
		r, srv := copilotRig(t)
		srv.Script(fakes.Reply{Status: 400, ErrorMessage: "fake bad request"}, fakes.TextReply(fakes.Usage{Input: 10, Output: 2}, "Second."))
		run := r.cli("say hello", "say more")
		require.Equal(t, 0, run.Code, run.Stderr)
		assert.Equal(t, []outcome{completed, completed}, run.outcomes())
		assertShape(t, append(textTurn(copilotGaps, "Error: 400 fake bad request"),
			started, keepAlive, "notification:Second.", "turn_completed"), run.shape(r))
		assert.Len(t, srv.ModelCalls(), 2, "a 400 is not retried:\n%s", srv.Describe())
	})
	t.Run("500 then recovery", func(t *testing.T) {
		r, srv := copilotRig(t)
		srv.Script(fakes.Reply{Status: 500, ErrorMessage: "fake server error", Header: http.Header{"Retry-After-Ms": {"10"}}},
			fakes.TextReply(fakes.Usage{Input: 10, Output: 2}, "Recovered."))
		cliCompleted(t, r, textTurn(copilotGaps, "Info: Request failed due to a transient API error. Retrying...Recovered."), "say hello")
		assert.Len(t, srv.ModelCalls(), 2, "one retry, then answered:\n%s", srv.Describe())
	})
}

// TestCopilotProbe: `acpdrive probe` against the raw initialize answer.
func TestCopilotProbe(t *testing.T) {
	t.Parallel()
	r, srv := copilotRig(t)
	probeMatchesInitialize(t, r, srv, "copilot", "copilot_events")
}

// TestCopilotUsage: the copilot_events source (adapters/copilot_measure)
// reads each turn's figures from Copilot's session-state journal, exact
// against the fake server's over two turns (the first with two model
// calls), through the library and through `acpdrive run` with the
// shipped sources. The prompt result's own usage (summed over the turn)
// is not what is recorded: here it agrees, and it is never more.
func TestCopilotUsage(t *testing.T) {
	t.Parallel()
	tool := &fakes.ToolCall{ID: "call_copilot_usage", Name: "bash", Args: map[string]any{"command": "true", "description": "nothing"}}
	t.Run("library", func(t *testing.T) {
		r, srv := copilotRig(t, "--allow-all-tools")
		usageScript(srv, tool)
		src := copilot_measure.New(copilot_measure.Options{Logger: slog.New(slog.NewTextHandler(r.logs, nil)),
			StateDir: filepath.Join(r.home, ".copilot")})
		measuredTwoTurnsLibrary(t, r, srv, src, copilotModel)
		resp, ok := r.wire.responseTo("session/prompt")
		require.True(t, ok)
		var pr struct {
			Usage struct {
				Input  int64 `json:"inputTokens"`
				Output int64 `json:"outputTokens"`
			} `json:"usage"`
		}
		require.NoError(t, json.Unmarshal(resp.Result, &pr))
		assert.Equal(t, wantUsage[0].InputTokens+wantUsage[0].CacheReadTokens, pr.Usage.Input, "the vendor figure of the first turn, summed over its calls (its input counts the cache)")
		assert.LessOrEqual(t, pr.Usage.Output, wantUsage[0].OutputTokens)
	})
	t.Run("cli", func(t *testing.T) {
		r, srv := copilotRig(t, "--allow-all-tools")
		usageScript(srv, tool)
		run := measuredTwoTurnsCLI(t, r, srv, copilotModel)
		assert.Contains(t, run.Stderr, "source=copilot_events")
	})
}
