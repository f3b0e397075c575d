//go:build interop

package interop

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/mcpresult"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
	"github.com/acpdrive/acpdrive/test/fakes"
)

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

// TestResultToolGemini: Gemini CLI 0.61.0 (default approval mode) offers
// acpdrive's result tool to the model; a first call that does not
// validate is answered with the validation errors, the second call's
// result is the turn's (source tool). The permission request, if Gemini
// asks one, is allowed as the posture's one exception
// (docs/behaviour.md#structured-results).
func TestResultToolGemini(t *testing.T) {
	const tool = "mcp_" + domain.ResultServerName + "_" + domain.ResultToolName
	r, srv := geminiRig(t, true)
	srv.Script(
		fakes.Reply{Tool: &fakes.ToolCall{Name: tool, Args: map[string]any{"done": "yes"}}, Usage: fakes.Usage{Input: 100, Output: 9}},
		fakes.Reply{Tool: &fakes.ToolCall{Name: tool, Args: map[string]any{"done": true}}, Usage: fakes.Usage{Input: 120, Output: 9}},
		fakes.TextReply(fakes.Usage{Input: 140, Output: 6}, "Submitted."),
	)
	sess := r.mustStart(withResultTool(t))
	res := sess.Turn(context.Background(), "finish the work")
	calls := srv.ModelCalls()
	t.Logf("model calls: %d; outcome %s; result %s (%s); missing %q", len(calls), res.Outcome, res.Result, res.ResultSource, res.ResultMissing)
	require.NotEmpty(t, calls, srv.Describe())
	assert.True(t, calls[0].BodyContains(`"name":"`+tool+`"`), "the result tool is declared to the model")
	if len(calls) > 1 {
		// Gemini CLI validates a tool's arguments against its declared
		// schema itself ("params/done must be boolean") before the call
		// reaches the server; either validator's errors reach the model.
		assert.True(t, calls[1].BodyContains("does not validate") || calls[1].BodyContains("must be boolean"),
			"the validation errors reach the model: %s", calls[1].Body)
	}
	assert.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.JSONEq(t, `{"done":true}`, string(res.Result))
	assert.Equal(t, domain.ResultSourceTool, res.ResultSource)
}

// TestResultToolLastTurnGemini: under output_schema_turns last, Gemini
// CLI 0.61.0's model calls acpdrive's result tool in the first turn
// (Session.Turn): the call is answered that this turn does not ask, the
// answer reaches the model, and the turn has neither result nor
// result_missing; the last turn (Session.TurnWithResult) carries the
// instruction and its call is the result (docs/behaviour.md#structured-results).
func TestResultToolLastTurnGemini(t *testing.T) {
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
