package app_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/mcpresult"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
	"github.com/acpdrive/acpdrive/ports"
)

// fakeResultServer is a ports.ResultServer whose tool "was called" with
// the results queued in it, one per Take.
type fakeResultServer struct {
	mu       sync.Mutex
	queue    []json.RawMessage
	schema   json.RawMessage
	released bool
}

func (f *fakeResultServer) Arm(_ context.Context, schema json.RawMessage, _ ports.MCPTransports) (ports.ArmedResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.schema = schema
	return f, nil
}

func (f *fakeResultServer) Server() domain.MCPServer {
	return domain.MCPServer{Name: domain.ResultServerName, Transport: domain.MCPStdio, Command: "/bin/true"}
}

func (f *fakeResultServer) Ask(bool) {}

func (f *fakeResultServer) Take() (json.RawMessage, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.queue) == 0 {
		return nil, ""
	}
	v := f.queue[0]
	f.queue = f.queue[1:]
	return v, ""
}

func (f *fakeResultServer) Release() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.released = true
	return nil
}

func withResultServer(f *fakeResultServer) option {
	return func(o *app.Options) { o.ResultServer = f }
}

// TestResultToolDeclaredAndTaken: with an output schema and a
// ResultServer, session/new declares the result server beside the others,
// the prompt names the tool, and the tool's result is the turn's, source
// tool; a tool result that does not validate is not, and the reply is
// tried (docs/behaviour.md#structured-results).
func TestResultToolDeclaredAndTaken(t *testing.T) {
	t.Parallel()
	f := &fakeResultServer{queue: []json.RawMessage{json.RawMessage(`{"done":true}`), json.RawMessage(`{"done":1}`)}}
	h := start(t, script(t, "structured-result.json"), withSchema(0), withResultServer(f))
	news := received(t, h.agentLg, "session/new")
	require.NotEmpty(t, news)
	assert.Contains(t, string(news[0].Message), `"name":"`+domain.ResultServerName+`"`)
	assert.JSONEq(t, resultSchema, string(f.schema))

	res := h.turn("#prose go")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome)
	assert.JSONEq(t, `{"done":true}`, string(res.Result))
	assert.Equal(t, domain.ResultSourceTool, res.ResultSource)
	assert.Contains(t, promptTexts(t, h)[0], domain.ResultToolName)

	res = h.turn("#result go")
	assert.Equal(t, domain.ResultSourceReply, res.ResultSource, "an invalid tool result gives way to the reply")
	assert.JSONEq(t, `{"done":true,"branch":"fix-32"}`, string(res.Result))

	h.stop()
	f.mu.Lock()
	defer f.mu.Unlock()
	assert.True(t, f.released)
}

// TestResultToolPermissionException: under the refusing posture the
// result tool's permission request is allowed (by result_tool), under
// Claude Code's and Gemini CLI's titles; a tool of another server with
// the same tool name is refused, and without a declared result server
// the result tool's title is refused too.
func TestResultToolPermissionException(t *testing.T) {
	t.Parallel()
	h := start(t, script(t, "result-tool.json"), withSchema(0), withResultServer(&fakeResultServer{}))
	for _, turn := range []string{"#tool", "#gemini", "#lookalike"} {
		res := h.turn(turn)
		require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	}
	ds := decisions(h)
	require.Len(t, ds, 3)
	assert.Equal(t, domain.PermissionAllow, ds[0].Decision)
	assert.Equal(t, domain.ByResultTool, ds[0].By)
	assert.Equal(t, domain.PermissionAllow, ds[1].Decision)
	assert.Equal(t, domain.PermissionRefuse, ds[2].Decision)
	assert.NotEqual(t, domain.ByResultTool, ds[2].By)

	plain := start(t, script(t, "result-tool.json"), withSchema(0))
	plain.turn("#tool")
	ds = decisions(plain)
	require.Len(t, ds, 1)
	assert.Equal(t, domain.PermissionRefuse, ds[0].Decision, "no result server declared: no exception")
}

// TestResultToolPermissionAnnounced: a runtime that asks under another
// title than the one it announced the call with (codex-acp 2.x: none and
// kind execute; codex-acp 0.16: "Approve MCP tool call"; Qwen Code: the
// arguments) has its request for the result tool allowed by result_tool,
// the decision naming the announced title; a call announced as another
// server's tool is the posture's, and so is every such request without a
// declared result server (docs/behaviour.md#structured-results).
func TestResultToolPermissionAnnounced(t *testing.T) {
	t.Parallel()
	h := start(t, script(t, "result-tool.json"), withSchema(0), withResultServer(&fakeResultServer{}))
	for _, turn := range []string{"#codex", "#codexold", "#qwen", "#announcedother", "#pathkeys"} {
		res := h.turn(turn)
		require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	}
	ds := decisions(h)
	require.Len(t, ds, 5)
	// A result whose keys look like paths (files, path) or a command is
	// still the result tool's call: its arguments are the result.
	assert.Equal(t, domain.PermissionAllow, ds[4].Decision)
	assert.Equal(t, domain.ByResultTool, ds[4].By)
	assert.NotEmpty(t, ds[4].Request.Paths, "the request did name paths")
	for i, title := range []string{"mcp.acpdrive-result.submit_result", "Tool: acpdrive-result/submit_result", "submit_result (acpdrive-result MCP Server)"} {
		assert.Equal(t, domain.PermissionAllow, ds[i].Decision, title)
		assert.Equal(t, domain.ByResultTool, ds[i].By, title)
		assert.Equal(t, title, ds[i].Request.Title, "the decision names the announced title")
	}
	assert.Equal(t, domain.ToolExecute, ds[0].Request.Kind)
	assert.Equal(t, domain.PermissionRefuse, ds[3].Decision, "another server's tool")
	assert.NotEqual(t, domain.ByResultTool, ds[3].By)
	assert.Empty(t, ds[3].Request.Title, "a request the exception does not take keeps its own title")

	plain := start(t, script(t, "result-tool.json"), withSchema(0))
	for _, turn := range []string{"#codex", "#qwen"} {
		plain.turn(turn)
	}
	for _, d := range decisions(plain) {
		assert.Equal(t, domain.PermissionRefuse, d.Decision, "no result server declared: no exception")
	}
	assert.Len(t, decisions(plain), 2)
}

// thoughts is every thought text the session reported.
func thoughts(h *harness) string {
	var b strings.Builder
	for _, ev := range h.rec.All() {
		if ev.Thought != "" {
			b.WriteString(ev.Thought + "\n")
		}
	}
	return b.String()
}

func withRealResultServer(t *testing.T) option {
	s := mcpresult.New(mcpresult.Options{Command: []string{testbin.Path(t), mcpresult.SubcommandName}})
	return func(o *app.Options) { o.ResultServer = s }
}

// TestResultToolThroughMCP: the reference agent calls acpdrive's result
// server (the CLI binary's mcp-result) as a runtime would. A valid call is
// the turn's result, source tool; an invalid first call is answered with
// the validation errors and the corrected second call is the result; only
// invalid calls, even after the follow-up, end result_missing with the
// last validation error and the turn still completed.
func TestResultToolThroughMCP(t *testing.T) {
	t.Parallel()
	h := start(t, script(t, "result-tool-mcp.json"), withSchema(1), withRealResultServer(t))

	res := h.turn("#valid go")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.JSONEq(t, `{"done":true,"branch":"fix-32"}`, string(res.Result), res.ResultMissing+"\n"+thoughts(h))
	assert.Equal(t, domain.ResultSourceTool, res.ResultSource)

	res = h.turn("#fix go")
	assert.JSONEq(t, `{"done":true}`, string(res.Result), res.ResultMissing+"\n"+thoughts(h))
	assert.Equal(t, domain.ResultSourceTool, res.ResultSource)
	assert.Contains(t, thoughts(h), "mcpCall submit_result error: "+domain.MsgResultInvalidPrefix)

	res = h.turn("#bad go")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome)
	assert.Nil(t, res.Result)
	assert.True(t, strings.HasPrefix(res.ResultMissing, domain.MsgResultInvalidPrefix), "the tool's last validation error: %s", res.ResultMissing)
	prompts := promptTexts(t, h)
	require.Len(t, prompts, 4, "one follow-up after #bad")
	assert.Contains(t, prompts[3], "Call the tool "+domain.ResultToolName)
}
