//go:build interop

package interop

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/mcpresult"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// Structured results against real runtimes
// (docs/behaviour.md#structured-results, docs/runtimes.md#structured-results-per-runtime):
// acpdrive declares its result server, the fake model calls the result
// tool under the name the runtime gave it (read from the first model
// request: each runtime names MCP tools its own way), and the turn's
// result is the tool's; a model that never calls it but ends with a fenced
// JSON block gives a reply result; one that does neither ends
// result_missing after the bounded follow-up, which the model receives.

// resultSchemaText is the output schema of the structured-result cases.
const resultSchemaText = `{"type":"object","properties":{"done":{"type":"boolean"}},"required":["done"]}`

// withResultTool asks for a structured result through acpdrive's result
// tool (the CLI binary's mcp-result subcommand).
func withResultTool(t *testing.T) optFn {
	bin := testbin.Path(t)
	return func(o *app.Options) {
		o.Settings.OutputSchema = json.RawMessage(resultSchemaText)
		o.ResultServer = mcpresult.New(mcpresult.Options{Command: []string{bin, mcpresult.SubcommandName}, Logger: o.Logger})
	}
}

// withOutputRetries sets the bounded follow-up (agent.output_retries).
func withOutputRetries(n int) optFn {
	return func(o *app.Options) { o.Settings.OutputRetries = n }
}

// resultRow is one runtime and how its model reaches acpdrive's result
// tool, as measured on the pinned version.
type resultRow struct {
	row string
	rig func(t *testing.T) (*rig, *fakes.Server)
	// call is the result tool's call as the model makes it.
	call func(id string, args map[string]any) *fakes.ToolCall
	// declared are strings of the first model request that show the tool
	// offered to the model under that name.
	declared []string
	// modes are the session modes the tool case runs in: "" is the
	// runtime's default; asks lists the modes in which the runtime sends
	// the call's permission request to acpdrive.
	modes []string
	asks  map[string]bool
	// title is the title acpdrive's permission decision names: the
	// request's own, or the one the call was announced with.
	title string
	// before, when set, are the model's calls before the result tool's in
	// a mode (Claude's ToolSearch, which loads a deferred tool's schema).
	before func(mode string) []fakes.Reply
}

// Phrases of the side calls a runtime makes to decide on a tool call by
// itself: codex-acp 2.6.0's guardian (its default mode "agent" reviews
// each MCP tool call with a model call of its own). Claude 0.101.0's auto
// mode classifier is claudeClassifierStage1/2.
const codexGuardianMarker = "APPROVAL REQUEST START"

// The result tool as the runtimes name it to the model.
const (
	claudeResultTool = "mcp__" + domain.ResultServerName + "__" + domain.ResultToolName
	geminiResultTool = "mcp_" + domain.ResultServerName + "_" + domain.ResultToolName
	// codexResultNamespace: codex declares each MCP server's tools in a
	// namespace mcp__<server, "-" written "_">, each tool by its own name.
	codexResultNamespace = "mcp__acpdrive_result"
)

func resultRows() []resultRow {
	return []resultRow{
		{
			row: "gemini", rig: func(t *testing.T) (*rig, *fakes.Server) { return geminiRig(t, true) },
			call: func(id string, args map[string]any) *fakes.ToolCall {
				return &fakes.ToolCall{ID: id, Name: geminiResultTool, Args: args}
			},
			declared: []string{`"name":"` + geminiResultTool + `"`},
			modes:    []string{""}, asks: map[string]bool{"": true},
			title: domain.ResultToolName + " (" + domain.ResultServerName + " MCP Server)",
		},
		{
			row: "claude-current",
			rig: func(t *testing.T) (*rig, *fakes.Server) {
				r, srv := claudeRigOf(t, "claude-current")
				// auto, the default mode: the adapter's classifier (model
				// calls of its own, answered aside as harmless) decides.
				srv.Aside(claudeClassifierStage1, fakes.TextReply(fakes.Usage{Input: 50, Output: 3}, "<severity>0</severity>"))
				srv.Aside(claudeClassifierStage2, fakes.TextReply(fakes.Usage{Input: 50, Output: 3}, "<block>no</block>"))
				return r, srv
			},
			call: func(id string, args map[string]any) *fakes.ToolCall {
				return &fakes.ToolCall{ID: "toolu_" + id, Name: claudeResultTool, Args: args}
			},
			// Deferred: listed by name for its ToolSearch tool, its schema
			// not in the request.
			declared: []string{claudeResultTool, `"name":"ToolSearch"`},
			modes:    []string{"", "default"}, asks: map[string]bool{"default": true},
			title: claudeResultTool,
			before: func(mode string) []fakes.Reply {
				if mode != "" {
					return nil // called directly, without loading its schema
				}
				return []fakes.Reply{{Tool: &fakes.ToolCall{ID: "toolu_search", Name: "ToolSearch",
					Args: map[string]any{"query": "select:" + claudeResultTool}}, Usage: fakes.Usage{Input: 90, Output: 5}}}
			},
		},
		{
			row: "codex-current",
			rig: func(t *testing.T) (*rig, *fakes.Server) {
				r, srv := codexRigOf(t, "codex-current")
				srv.Aside(codexGuardianMarker, fakes.TextReply(fakes.Usage{Input: 50, Output: 9},
					`{"outcome":"allow","risk_level":"low","user_authorization":"high","rationale":"the user asked for the result"}`))
				return r, srv
			},
			call: func(id string, args map[string]any) *fakes.ToolCall {
				return &fakes.ToolCall{ID: "call_" + id, Name: domain.ResultToolName, Namespace: codexResultNamespace, Args: args}
			},
			declared: []string{`"name":"` + codexResultNamespace + `"`, `"name":"` + domain.ResultToolName + `"`},
			modes:    []string{"", "read-only"}, asks: map[string]bool{"read-only": true},
			title: domain.ResultToolTitleExecute,
		},
	}
}

// resultSession starts a session of row in mode with the result tool and
// opts.
func resultSession(t *testing.T, r *rig, mode string, opts ...optFn) *app.Session {
	opts = append([]optFn{withResultTool(t)}, opts...)
	if mode != "" {
		opts = append(opts, withSessionConfig(domain.SessionConfig{Mode: mode}))
	}
	return r.mustStart(opts...)
}

// promptsSent are the texts of the session/prompt calls acpdrive sent.
func promptsSent(t *testing.T, r *rig) []string {
	t.Helper()
	var out []string
	for _, m := range r.wire.messages() {
		if !m.Out || m.Method != "session/prompt" {
			continue
		}
		var p struct {
			Prompt []struct {
				Text string `json:"text"`
			} `json:"prompt"`
		}
		require.NoError(t, json.Unmarshal(m.Params, &p))
		var b strings.Builder
		for _, c := range p.Prompt {
			b.WriteString(c.Text)
		}
		out = append(out, b.String())
	}
	return out
}

// asides counts the model calls answered aside whose body holds marker.
func asides(srv *fakes.Server, marker string) int {
	n := 0
	for _, q := range srv.Requests() {
		if !q.Scripted && q.BodyContains(marker) {
			n++
		}
	}
	return n
}

// TestResultTool: the model calls acpdrive's result tool first with
// arguments that do not validate, then with valid ones. The validation
// errors reach the model (acpdrive's, or the runtime's own where it
// validates the arguments first), the second call's result is the turn's,
// source tool, and the turn completes. Where the mode asks, every
// permission request of the call is allowed by result_tool under the
// measured title.
func TestResultTool(t *testing.T) {
	t.Parallel()
	for _, c := range resultRows() {
		for _, mode := range c.modes {
			name := c.row
			if mode != "" {
				name += "/" + mode
			}
			t.Run(name, func(t *testing.T) {
				r, srv := c.rig(t)
				var script []fakes.Reply
				if c.before != nil {
					script = append(script, c.before(mode)...)
				}
				script = append(script,
					fakes.Reply{Tool: c.call("1", map[string]any{"done": "yes"}), Usage: fakes.Usage{Input: 100, Output: 9}},
					fakes.Reply{Tool: c.call("2", map[string]any{"done": true}), Usage: fakes.Usage{Input: 120, Output: 9}},
					fakes.TextReply(fakes.Usage{Input: 140, Output: 6}, "Submitted."),
				)
				srv.Script(script...)
				srv.SetFallback(fakes.TextReply(fakes.Usage{Input: 10, Output: 2}, "Nothing more."))
				sess := resultSession(t, r, mode)
				res := r.turn(sess, "finish the work")

				calls := srv.ModelCalls()
				t.Logf("%s: %d model calls, %d classifier and %d guardian calls aside; outcome %s; result %s (%s); missing %q",
					name, len(calls), asides(srv, claudeClassifierStage1)+asides(srv, claudeClassifierStage2), asides(srv, codexGuardianMarker),
					res.Outcome, res.Result, res.ResultSource, res.ResultMissing)
				require.NotEmpty(t, calls, srv.Describe())
				for _, d := range c.declared {
					assert.True(t, calls[0].BodyContains(d), "the first model request offers the result tool: %q", d)
				}
				corrected := false
				for _, call := range calls[1:] {
					if call.BodyContains(domain.MsgResultInvalidPrefix) || call.BodyContains("must be boolean") {
						corrected = true
					}
				}
				assert.True(t, corrected, "a later model call carries the validation errors")

				assert.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
				assert.JSONEq(t, `{"done":true}`, string(res.Result))
				assert.Equal(t, domain.ResultSourceTool, res.ResultSource)
				assert.Empty(t, res.ResultMissing)
				assert.Len(t, promptsSent(t, r), 1, "a valid result: no follow-up")

				ds := decisionsOf(r.rec.All())
				for _, d := range ds {
					t.Logf("%s: decision %s by %s: kind %s, title %q, option %s", name, d.Decision, d.By, d.Request.Kind, d.Request.Title, d.OptionID)
					assert.Equal(t, domain.PermissionAllow, d.Decision)
					assert.Equal(t, domain.ByResultTool, d.By)
					assert.Equal(t, c.title, d.Request.Title, "the measured title")
				}
				if c.asks[mode] {
					assert.NotEmpty(t, ds, "in %q the runtime asks acpdrive for the call", mode)
				}
			})
		}
	}
}

// TestResultFromReply: a model that never calls the result tool but ends
// its reply with a fenced JSON block gives the result, source reply, with
// no follow-up.
func TestResultFromReply(t *testing.T) {
	t.Parallel()
	for _, c := range resultRows() {
		t.Run(c.row, func(t *testing.T) {
			r, srv := c.rig(t)
			srv.Script(fakes.TextReply(fakes.Usage{Input: 100, Output: 12}, "The work is done.\n\n```json\n", `{"done": true}`, "\n```\n"))
			srv.SetFallback(fakes.TextReply(fakes.Usage{Input: 10, Output: 2}, "Nothing more."))
			sess := resultSession(t, r, "", withOutputRetries(1))
			res := r.turn(sess, "finish the work")
			t.Logf("%s: %d model calls; outcome %s; result %s (%s); missing %q", c.row, len(srv.ModelCalls()), res.Outcome, res.Result, res.ResultSource, res.ResultMissing)
			assert.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
			assert.JSONEq(t, `{"done":true}`, string(res.Result))
			assert.Equal(t, domain.ResultSourceReply, res.ResultSource)
			assert.Empty(t, res.ResultMissing)
			assert.Len(t, promptsSent(t, r), 1, "a valid result: no follow-up")
			assert.Empty(t, decisionsOf(r.rec.All()), "no tool was called")
		})
	}
}

// TestResultMissing: a model that neither calls the result tool nor ends
// with a JSON object gets the one follow-up --output-retries 1 allows, which
// reaches the model; answered with prose again, the turn completes with
// result_missing and no result.
func TestResultMissing(t *testing.T) {
	t.Parallel()
	followUp := domain.ResultFollowUp(domain.MsgResultNoJSON, true)
	for _, c := range resultRows() {
		t.Run(c.row, func(t *testing.T) {
			r, srv := c.rig(t)
			srv.Script(
				fakes.TextReply(fakes.Usage{Input: 100, Output: 6}, "I did the work."),
				fakes.TextReply(fakes.Usage{Input: 120, Output: 6}, "It is all done."),
			)
			srv.SetFallback(fakes.TextReply(fakes.Usage{Input: 10, Output: 2}, "Nothing more."))
			sess := resultSession(t, r, "", withOutputRetries(1))
			res := r.turn(sess, "finish the work")
			calls := srv.ModelCalls()
			t.Logf("%s: %d model calls; outcome %s; result %s; missing %q", c.row, len(calls), res.Outcome, res.Result, res.ResultMissing)

			assert.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
			assert.Nil(t, res.Result)
			assert.Empty(t, res.ResultSource)
			assert.Equal(t, domain.MsgResultNoJSON, res.ResultMissing)
			prompts := promptsSent(t, r)
			require.Len(t, prompts, 2, "the prompt and exactly one follow-up")
			assert.Equal(t, followUp, prompts[1])
			assert.Len(t, r.rec.OfType(domain.EventTurnCompleted), 2, "the follow-up is a turn of its own")
			reached := false
			for _, call := range calls[1:] {
				// The follow-up's distinctive part, as JSON text.
				if call.BodyContains("did not deliver the result (" + domain.MsgResultNoJSON + ")") {
					reached = true
				}
			}
			assert.True(t, reached, "the follow-up reaches the model:\n%s", srv.Describe())
		})
	}
}

// TestResultToolPermissionForms: the runtimes whose permission request
// carries another title than the call's announcement (Qwen Code 0.24.4:
// the arguments; codex-acp 0.16.0: "Approve MCP tool call") in the mode
// that asks: the request for the result tool is allowed by result_tool
// under the announced title, and the call's result is the turn's.
func TestResultToolPermissionForms(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		row   string
		rig   func(t *testing.T) (*rig, *fakes.Server)
		call  *fakes.ToolCall
		mode  string
		title string
	}{
		{
			row: "qwen", rig: func(t *testing.T) (*rig, *fakes.Server) { return qwenRig(t, "--approval-mode", "default") },
			call:  &fakes.ToolCall{ID: "call_1", Name: claudeResultTool, Args: map[string]any{"done": true}},
			title: domain.ResultToolName + " (" + domain.ResultServerName + " MCP Server)",
		},
		{
			row: "codex", rig: func(t *testing.T) (*rig, *fakes.Server) { return codexRigOf(t, "codex") },
			call: &fakes.ToolCall{ID: "call_1", Name: domain.ResultToolName, Namespace: codexResultNamespace, Args: map[string]any{"done": true}},
			mode: "read-only", title: "Tool: " + domain.ResultServerName + "/" + domain.ResultToolName,
		},
	} {
		t.Run(c.row, func(t *testing.T) {
			r, srv := c.rig(t)
			srv.Script(
				fakes.Reply{Tool: c.call, Usage: fakes.Usage{Input: 100, Output: 9}},
				fakes.TextReply(fakes.Usage{Input: 140, Output: 6}, "Submitted."),
			)
			srv.SetFallback(fakes.TextReply(fakes.Usage{Input: 10, Output: 2}, "Nothing more."))
			sess := resultSession(t, r, c.mode)
			res := r.turn(sess, "finish the work")
			t.Logf("%s: outcome %s; result %s (%s); missing %q", c.row, res.Outcome, res.Result, res.ResultSource, res.ResultMissing)
			ds := decisionsOf(r.rec.All())
			require.NotEmpty(t, ds, "the runtime asks for the call")
			for _, d := range ds {
				t.Logf("%s: decision %s by %s: kind %s, title %q", c.row, d.Decision, d.By, d.Request.Kind, d.Request.Title)
				assert.Equal(t, domain.PermissionAllow, d.Decision)
				assert.Equal(t, domain.ByResultTool, d.By)
				assert.Equal(t, c.title, d.Request.Title, "judged under the announced title")
			}
			perm, ok := r.wire.request("session/request_permission")
			require.True(t, ok)
			assert.NotContains(t, string(perm.Params), `"title":"`+c.title+`"`, "the request's own title is another")
			assert.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
			assert.JSONEq(t, `{"done":true}`, string(res.Result))
			assert.Equal(t, domain.ResultSourceTool, res.ResultSource)
		})
	}
}

// TestResultToolLastTurnGemini: under output_schema_turns last, Gemini
// CLI 0.61.0's model calls acpdrive's result tool in the first turn
// (Session.Turn): the call is answered that this turn does not ask, the
// answer reaches the model, and the turn has neither result nor
// result_missing; the last turn (Session.TurnWithResult) carries the
// instruction and its call is the result (docs/behaviour.md#structured-results).
func TestResultToolLastTurnGemini(t *testing.T) {
	t.Parallel()
	const tool = "mcp_" + domain.ResultServerName + "_" + domain.ResultToolName
	r, srv := geminiRig(t, true)
	srv.Script(
		fakes.Reply{Tool: &fakes.ToolCall{Name: tool, Args: map[string]any{"done": false}}, Usage: fakes.Usage{Input: 100, Output: 9}},
		fakes.TextReply(fakes.Usage{Input: 120, Output: 6}, "Read it."),
		fakes.Reply{Tool: &fakes.ToolCall{Name: tool, Args: map[string]any{"done": true}}, Usage: fakes.Usage{Input: 140, Output: 9}},
		fakes.TextReply(fakes.Usage{Input: 160, Output: 6}, "Submitted."),
	)
	sess := r.mustStart(withResultTool(t), func(o *app.Options) { o.Settings.OutputSchemaTurns = domain.ResultTurnsLast })

	first := sess.Turn(context.Background(), "read the issue")
	require.Equal(t, domain.OutcomeCompleted, first.Outcome, first.Message())
	assert.Nil(t, first.Result)
	assert.Empty(t, first.ResultMissing)
	last := sess.TurnWithResult(context.Background(), "finish the work")
	calls := srv.ModelCalls()
	t.Logf("model calls: %d; last: outcome %s; result %s (%s); missing %q", len(calls), last.Outcome, last.Result, last.ResultSource, last.ResultMissing)
	require.Len(t, calls, 4, srv.Describe())
	assert.False(t, calls[0].BodyContains("[acpdrive]"), "the first prompt goes as given")
	assert.True(t, calls[1].BodyContains("does not ask for the result"), "the answer reaches the model: %s", calls[1].Body)
	assert.True(t, calls[2].BodyContains("[acpdrive] When you have finished"), "the last prompt carries the instruction")
	assert.Equal(t, domain.OutcomeCompleted, last.Outcome, last.Message())
	assert.JSONEq(t, `{"done":true}`, string(last.Result))
	assert.Equal(t, domain.ResultSourceTool, last.ResultSource)
}
