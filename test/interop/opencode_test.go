//go:build interop

package interop

import (
	"fmt"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// opencode 1.18.33 (opencode-ai, `opencode acp`, a native Bun binary)
// against the fake Chat Completions server, offline.

const opencodeModel = "fake-model"

// opencodeRig runs opencode in a network namespace of its own with one
// provider, the fake (@ai-sdk/openai-compatible, bundled), its model
// pinned; the model catalogue fetch, auto-update, sharing, LSP
// downloads and default plugins off; and a config folder that already
// holds node_modules/ and a package-lock.json listing @opencode-ai/plugin,
// without which opencode installs that package from the npm registry
// into every config folder. permission is the config's "permission"
// object ("" for opencode's default: bash runs without asking).
func opencodeRig(t *testing.T, permission string) (*rig, *fakes.Server) {
	r := newRig(t, locate(t, "opencode", "opencode/node_modules/opencode-linux-x64/bin/opencode"), "acp")
	r.offline()
	srv := r.serve(fakes.NewChat())
	cfgDir := filepath.Join(r.home, ".config", "opencode")
	perm := ""
	if permission != "" {
		perm = `, "permission": ` + permission
	}
	writeFile(t, filepath.Join(cfgDir, "opencode.json"), fmt.Sprintf(`{
  "provider": {"fake": {"npm": "@ai-sdk/openai-compatible", "name": "Fake",
    "options": {"baseURL": "%s/v1", "apiKey": "fake-opencode-key"},
    "models": {"%s": {"name": "Fake Model"}}}},
  "model": "fake/%s",
  "share": "disabled",
  "autoupdate": false%s
}
`, srv.URL(), opencodeModel, opencodeModel, perm))
	writeFile(t, filepath.Join(cfgDir, "package-lock.json"), `{"packages": {"": {"dependencies": {"@opencode-ai/plugin": "*"}}}}`+"\n")
	writeFile(t, filepath.Join(cfgDir, "node_modules", ".keep"), "")
	r.setenv("OPENCODE_DISABLE_MODELS_FETCH", "1")
	r.setenv("OPENCODE_DISABLE_AUTOUPDATE", "1")
	r.setenv("OPENCODE_DISABLE_SHARE", "1")
	r.setenv("OPENCODE_DISABLE_LSP_DOWNLOAD", "1")
	r.setenv("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1")
	logEvidenceAtEnd(t, "opencode", r)
	return r, srv
}

var opencodeGaps = gapNotice(domain.CapTokenCounts)

// titleCalls counts opencode's title calls (side calls: streamed, no
// tools), which took no scripted reply.
func titleCalls(srv *fakes.Server) int {
	n := 0
	for _, r := range srv.Requests() {
		if !r.Scripted && r.Method == http.MethodPost && r.BodyContains("title generator") {
			n++
		}
	}
	return n
}

// TestOpencodeTwoTurns: two turns on one opencode process; the second
// model call carries the first turn. Once per session opencode asks for
// a title (a side call), and acpdrive ends the session with session/close.
func TestOpencodeTwoTurns(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, srv *fakes.Server) {
		calls := srv.ModelCalls()
		require.Len(t, calls, 2, srv.Describe())
		for _, c := range calls {
			assert.Equal(t, "/v1/chat/completions", c.Path)
			assert.Equal(t, "Bearer fake-opencode-key", c.Header.Get("Authorization"))
			assert.Contains(t, c.Header.Get("User-Agent"), "opencode/1.18.33")
			body := c.JSON()
			assert.Equal(t, opencodeModel, body["model"])
			assert.Equal(t, map[string]any{"include_usage": true}, body["stream_options"])
		}
		assert.Equal(t, 1, titleCalls(srv), "one title call per session:\n%s", srv.Describe())
	}
	t.Run("library", func(t *testing.T) {
		r, srv := opencodeRig(t, "")
		twoTurnsLibrary(t, r, srv, opencodeGaps)
		check(t, srv)
		assert.Equal(t, []string{"initialize", "session/new", "session/prompt", "session/prompt", "session/close"}, r.wire.methodsOut())
		closeAnswered(t, r, srv.ModelCalls()[0].Header.Get("x-session-id"))
	})
	t.Run("cli", func(t *testing.T) {
		r, srv := opencodeRig(t, "")
		r.measure = true // every shipped source may claim: none reads opencode
		run := twoTurnsCLI(t, r, srv, opencodeGaps)
		check(t, srv)
		// The prompt results carry usage (the last model call's only): the
		// protocol measures each turn (docs/behaviour.md#token-accounting),
		// so token counts is no gap by the run's end.
		assert.Empty(t, run.Run.CapabilityGaps)
		for _, res := range run.Results {
			assert.NotNil(t, res.Usage, "turn %d measured from the prompt result", res.Turn)
		}
		assert.NotNil(t, run.Run.Usage)
		assert.Equal(t, 2, run.Run.MeasuredTurns)
	})
}

// TestOpencodeToolRefused: with "permission": {"bash": "ask"} the model's
// bash call asks (request id 0, options once / always / reject); acpdrive
// refuses with "reject" (reject_once); opencode fails the call and ends
// the turn with no further model call.
func TestOpencodeToolRefused(t *testing.T) {
	t.Parallel()
	want := []string{
		started,
		opencodeGaps,
		keepAlive,
		"notification:Let me write the file.",
		refused,
		"tool_result:execute:error",
		"turn_completed",
	}
	script := func(srv *fakes.Server) {
		srv.Script(fakes.Reply{
			Text:  []string{"Let me write the file."},
			Tool:  &fakes.ToolCall{ID: "call_opencode_1", Name: "bash", Args: map[string]any{"command": "echo interop > out.txt", "description": "write out.txt"}},
			Usage: fakes.Usage{Input: 100, Output: 12},
		})
	}
	check := func(t *testing.T, r *rig, srv *fakes.Server) {
		assert.Len(t, srv.ModelCalls(), 1, "the refusal ends the turn: no further model call\n%s", srv.Describe())
		assert.Equal(t, 0, srv.Unscripted())
		assertNotWritten(t, r)
	}
	const permission = `{"bash": "ask", "edit": "ask"}`
	t.Run("library", func(t *testing.T) {
		r, srv := opencodeRig(t, permission)
		script(srv)
		sess := r.mustStart()
		libraryTurn(t, r, sess, "write interop into out.txt", completed, want)
		check(t, r, srv)
		perm, ok := r.wire.request("session/request_permission")
		require.True(t, ok)
		assert.Equal(t, "0", string(perm.ID))
		opts, _ := permissionOptions(t, perm)
		assert.Equal(t, []string{"once=allow_once", "always=allow_always", "reject=reject_once"}, opts)
		answer, ok := r.wire.answerTo(perm.ID)
		require.True(t, ok)
		assert.JSONEq(t, `{"outcome":{"outcome":"selected","optionId":"reject"}}`, string(answer.Result))
		updates, _ := toolUpdates(t, r)
		assertToolLifecycle(t, updates, "failed")
	})
	t.Run("cli", func(t *testing.T) {
		r, srv := opencodeRig(t, permission)
		script(srv)
		cliCompleted(t, r, want, "write interop into out.txt")
		check(t, r, srv)
	})
}

// TestOpencodeMCPStdio: a stdio MCP server from a WORKFLOW.md's
// mcp_config reaches opencode on session/new; opencode declares its tool
// to the model as <server>_<tool>, runs it without asking when the model
// calls it, and the server's answer goes back to the model.
func TestOpencodeMCPStdio(t *testing.T) {
	t.Parallel()
	const tool = "interop_record_note"
	want := []string{
		started,
		opencodeGaps,
		keepAlive,
		"notification:Let me note that.",
		"tool_result:other:ok",
		keepAlive,
		"notification:Noted.",
		"turn_completed",
	}
	setup := func(t *testing.T) (*rig, *fakes.Server, string, string) {
		r, srv := opencodeRig(t, "")
		mcpLog := filepath.Join(r.root, "mcp-stdio.jsonl")
		cfg := filepath.Join(r.root, "cfg", "mcp.json")
		writeMCPConfig(t, cfg, map[string]mcpServerDecl{
			"interop": {Command: mcpServerBin(t), Args: []string{"-transport", "stdio"}, Env: map[string]string{"MCPSERVER_LOG": mcpLog}},
		})
		srv.Script(
			fakes.Reply{
				Text:  []string{"Let me note that."},
				Tool:  &fakes.ToolCall{ID: "call_opencode_mcp", Name: tool, Args: map[string]any{"text": noteText}},
				Usage: fakes.Usage{Input: 100, Output: 9},
			},
			fakes.TextReply(fakes.Usage{Input: 130, Output: 6}, "Noted."),
		)
		return r, srv, cfg, mcpLog
	}
	check := func(t *testing.T, srv *fakes.Server, mcpLog string) {
		calls := checkNoteCalled(t, srv, mcpLog)
		assert.True(t, calls[0].BodyContains(`"name":"`+tool+`"`), "the MCP tool is declared to the model")
	}
	t.Run("library", func(t *testing.T) {
		r, srv, cfg, mcpLog := setup(t)
		sess := r.mustStart(withMCP(cfg))
		libraryTurn(t, r, sess, "note "+noteText, completed, want)
		check(t, srv, mcpLog)
		// The prompt result's usage is the last model call's only (the
		// turn made two: 100/9, then 130/6).
		resp, ok := r.wire.responseTo("session/prompt")
		require.True(t, ok)
		assert.Contains(t, string(resp.Result), `"usage":{"inputTokens":130,"outputTokens":6,"totalTokens":136}`)
		// The protocol measures the turn from it (docs/behaviour.md#token-accounting:
		// opencode's figure leaves out every model call but the last).
		evs := r.rec.OfType(domain.EventTokenUsage)
		require.Len(t, evs, 1)
		assert.Equal(t, domain.SourcePromptResult, evs[0].Source)
		assert.Equal(t, domain.Usage{InputTokens: 130, OutputTokens: 6, TotalTokens: 136}, *evs[0].Usage)
		updates, permission := toolUpdates(t, r)
		assert.False(t, permission, "opencode runs MCP tools without asking")
		assertToolLifecycle(t, updates, "completed")
	})
	t.Run("cli workflow", func(t *testing.T) {
		r, srv, cfg, mcpLog := setup(t)
		wf := writeMCPWorkflow(t, filepath.Dir(cfg), r.launchCommand())
		run := cliCompleted(t, r, want, "--workflow", wf, "note "+noteText)
		assert.Empty(t, run.Run.CapabilityGaps, "the prompt results' usage measures the turns: token counts is no gap")
		check(t, srv, mcpLog)
	})
}

// TestOpencodeCancel: cancelled while the model call streams; opencode
// answers the prompt "cancelled" and calls the model no more.
func TestOpencodeCancel(t *testing.T) {
	t.Parallel()
	r, srv := opencodeRig(t, "")
	result := cancelMidTurn(t, r, srv)
	assert.Contains(t, string(result), `"usage":{"inputTokens":0,"outputTokens":0`, "opencode reports zero usage for a cancelled call")
}

// TestOpencodeResume: `acpdrive run --resume` in another process
// continues a saved session through session/load; opencode replays the
// history before the load's response, and it reaches the model.
func TestOpencodeResume(t *testing.T) {
	t.Parallel()
	r, srv := opencodeRig(t, "")
	run := resumeAcrossProcesses(t, r, srv)
	assert.Empty(t, run.Run.CapabilityGaps, "the prompt results' usage measures the turns: token counts is no gap")
}

// opencodeModelError is acpdrive's message for opencode's answer to a
// failed model call: -32603 with the API's message, and data naming the
// failing service and error class.
func opencodeModelError(apiMsg string) string {
	return `session/prompt error -32603: Internal error: ` + apiMsg + ` (data: {"service":"session","errorName":"APIError"})`
}

// TestOpencodeModelHTTPError: a 400 is not retried: the prompt fails
// -32603 "Internal error: <the API's message>", which acpdrive quotes
// (response_error, retryable). A 500 is retried 5 times, honouring
// retry-after-ms (10 ms here; opencode's own backoff starts at 2 s and
// doubles), and the sixth failure fails the prompt the same way.
func TestOpencodeModelHTTPError(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		script []fakes.Reply
		msg    string
	}{
		{"400", []fakes.Reply{{Status: 400, ErrorMessage: "fake bad request"}}, opencodeModelError("fake bad request")},
		{"500 six times", func() []fakes.Reply {
			fail := fakes.Reply{Status: 500, ErrorMessage: "fake server error", Header: http.Header{"Retry-After-Ms": {"10"}}}
			return []fakes.Reply{fail, fail, fail, fail, fail, fail}
		}(), opencodeModelError("fake server error")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, srv := opencodeRig(t, "")
			srv.Script(c.script...)
			wantOutcome := outcome{Outcome: "turn_failed", Kind: "response_error", Message: c.msg}
			run := cliFailed(t, r, wantOutcome, []string{started, opencodeGaps, "turn_ended_with_error:" + c.msg}, "say hello", "never sent")
			assert.True(t, *run.Results[0].Retryable)
			assert.Len(t, srv.ModelCalls(), len(c.script), "every attempt:\n%s", srv.Describe())
			assert.Equal(t, 0, srv.Unscripted(), "no attempt beyond the script")
		})
	}
}

// TestOpencodeProbe: `acpdrive probe` against the raw initialize answer.
func TestOpencodeProbe(t *testing.T) {
	t.Parallel()
	r, srv := opencodeRig(t, "")
	probeMatchesInitialize(t, r, srv, "opencode", "")
}
