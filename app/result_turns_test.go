package app_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
)

func withResultTurns(r domain.ResultTurns) option {
	return withConfig(func(s *domain.SessionSettings) { s.OutputSchemaTurns = r })
}

// turnWithResult runs TurnWithResult on h's session.
func (h *harness) turnWithResult(prompt string) domain.TurnResult {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return h.sess.TurnWithResult(ctx, prompt)
}

// TestResultTurnsThroughMCP: the model (the reference agent) calls
// acpdrive's result tool (the CLI binary's mcp-result) in every turn.
// Under output_schema_turns each (and ""), Turn asks for the result: the
// instruction, the tool's result. Under last, Turn asks for none: its
// prompt is sent as given, the call is answered "not asked" and kept for
// no later turn, and the turn has neither a result nor result_missing nor
// a follow-up. TurnWithResult asks under both: a turn whose only call
// does not validate ends result_missing with that call's error (the
// earlier turn's valid call is not carried over) after its one
// follow-up, and a valid call is the result
// (docs/behaviour.md#structured-results).
func TestResultTurnsThroughMCP(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		turns     domain.ResultTurns
		firstAsks bool
	}{
		{"", true},
		{domain.ResultTurnsEach, true},
		{domain.ResultTurnsLast, false},
	} {
		t.Run("turns="+string(c.turns), func(t *testing.T) {
			t.Parallel()
			h := start(t, script(t, "result-tool-mcp.json"), withSchema(1), withRealResultServer(t), withResultTurns(c.turns))
			notAsked := "mcpCall " + domain.ResultToolName + " error: " + domain.MsgResultNotAsked

			first := h.turn("#valid one")
			require.Equal(t, domain.OutcomeCompleted, first.Outcome, first.Message())
			prompts := promptTexts(t, h)
			require.Len(t, prompts, 1, "no follow-up after the first turn")
			if c.firstAsks {
				assert.JSONEq(t, `{"done":true,"branch":"fix-32"}`, string(first.Result), first.ResultMissing+"\n"+thoughts(h))
				assert.Equal(t, domain.ResultSourceTool, first.ResultSource)
				assert.Contains(t, prompts[0], "[acpdrive]")
				assert.NotContains(t, thoughts(h), notAsked)
			} else {
				assert.Nil(t, first.Result)
				assert.Empty(t, first.ResultSource)
				assert.Empty(t, first.ResultMissing)
				assert.NotContains(t, prompts[0], "[acpdrive]", "the prompt as given")
				assert.Contains(t, thoughts(h), notAsked)
			}

			second := h.turnWithResult("#bad two")
			require.Equal(t, domain.OutcomeCompleted, second.Outcome, second.Message())
			assert.Nil(t, second.Result, "the first turn's call is not carried over")
			assert.True(t, strings.HasPrefix(second.ResultMissing, domain.MsgResultInvalidPrefix), second.ResultMissing)
			prompts = promptTexts(t, h)
			require.Len(t, prompts, 3, "the last turn and its one follow-up")
			assert.Contains(t, prompts[1], domain.ResultToolInstruction[2:])
			assert.Contains(t, prompts[2], "did not deliver the result")

			third := h.turnWithResult("#valid three")
			assert.JSONEq(t, `{"done":true,"branch":"fix-32"}`, string(third.Result), third.ResultMissing+"\n"+thoughts(h))
			assert.Equal(t, domain.ResultSourceTool, third.ResultSource)
			assert.Equal(t, 1-btoi(c.firstAsks), strings.Count(thoughts(h), notAsked))
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestResultTurnsLastFromReply: without a result server, under
// output_schema_turns last, Turn sends the prompt as given and neither
// reads the reply for a result nor sends a follow-up, even with
// OutputRetries; TurnWithResult asks, reads the reply and sends the
// follow-up (docs/behaviour.md#structured-results).
func TestResultTurnsLastFromReply(t *testing.T) {
	t.Parallel()
	h := start(t, script(t, "structured-result.json"), withSchema(1), withResultTurns(domain.ResultTurnsLast))

	res := h.turn("#result one")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome)
	assert.Nil(t, res.Result, "a result in the reply of a turn that does not ask is not read")
	assert.Empty(t, res.ResultMissing)
	res = h.turn("#prose two")
	assert.Empty(t, res.ResultMissing)
	prompts := promptTexts(t, h)
	require.Len(t, prompts, 2, "no follow-up")
	for _, p := range prompts {
		assert.NotContains(t, p, "JSON Schema")
	}

	res = h.turnWithResult("go") // "invalid", then "result" on the follow-up
	assert.JSONEq(t, `{"done":true,"branch":"fix-32"}`, string(res.Result), res.ResultMissing)
	assert.Equal(t, domain.ResultSourceReply, res.ResultSource)
	prompts = promptTexts(t, h)
	require.Len(t, prompts, 4)
	assert.Contains(t, prompts[2], "valid against this JSON Schema")
	assert.Contains(t, prompts[3], "did not deliver the result")
}

// TestResultTurnsWithoutSchema: without an output schema TurnWithResult
// is Turn: the prompt as given, no result.
func TestResultTurnsWithoutSchema(t *testing.T) {
	t.Parallel()
	h := start(t, script(t, "structured-result.json"), withResultTurns(domain.ResultTurnsLast))
	res := h.turnWithResult("#result go")
	assert.Nil(t, res.Result)
	assert.Empty(t, res.ResultMissing)
	assert.NotContains(t, promptTexts(t, h)[0], "[acpdrive]")
}

// TestOutputSchemaTurnsRefusedAtStart: an output_schema_turns other than
// each and last refuses the start (agent_not_found, configuration_invalid)
// with the validation message; nothing is launched.
func TestOutputSchemaTurnsRefusedAtStart(t *testing.T) {
	t.Parallel()
	o, _, _, agentLog := agentOptions(t, nil, withSchema(0), withResultTurns("final"))
	_, err := app.Start(context.Background(), o)
	require.Error(t, err)
	var ae *domain.AgentError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, domain.KindAgentNotFound, ae.Kind)
	assert.Equal(t, `agent.output_schema_turns "final" is neither each nor last`, ae.Message)
	assert.Equal(t, domain.ReasonConfigurationInvalid, domain.ReasonOf(err))
	_, statErr := os.Stat(agentLog)
	assert.True(t, os.IsNotExist(statErr), "the agent never ran: %v", statErr)
}

// TestRetrierTurnWithResult: under output_schema_turns last, a turn that
// fails retryably (429) is sent again; with Retrier.TurnWithResult every
// attempt carries the instruction and the completed attempt's reply is
// the result; with Retrier.Turn no attempt asks and there is no result
// (docs/behaviour.md#retrying, docs/behaviour.md#structured-results).
func TestRetrierTurnWithResult(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "retry-result.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"defaultTurn":"first","turns":{
 "first":{"next":"ok","steps":[{"step":"error","error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","data":{"retryAfterMs":1000}}}]},
 "ok":{"steps":[{"step":"text","text":"Done.\n`+"```json"+`\n{\"done\":true}\n`+"```"+`\n"},{"step":"stop","stopReason":"end_turn"}]}}}`), 0o600))
	for _, c := range []struct {
		name string
		turn func(app.Retrier, context.Context, *app.Session, string) (domain.TurnResult, *app.Session, error)
		asks bool
	}{
		{"TurnWithResult", app.Retrier.TurnWithResult, true},
		{"Turn", app.Retrier.Turn, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := start(t, []string{"--script", path}, withSchema(0), withResultTurns(domain.ResultTurnsLast))
			out := retryTurnWith(t, h, app.Retrier{Policy: app.RetryPolicy{MaxRetries: 1}, Options: h.opts}, "go", c.turn)
			require.NoError(t, out.err)
			require.Equal(t, domain.OutcomeCompleted, out.res.Outcome, out.res.Message())
			require.Len(t, out.waits, 1)
			prompts := promptTexts(t, h)
			require.Len(t, prompts, 2)
			for _, p := range prompts {
				assert.Equal(t, c.asks, strings.Contains(p, "valid against this JSON Schema"), p)
			}
			if c.asks {
				assert.JSONEq(t, `{"done":true}`, string(out.res.Result), out.res.ResultMissing)
				assert.Equal(t, domain.ResultSourceReply, out.res.ResultSource)
			} else {
				assert.Nil(t, out.res.Result)
				assert.Empty(t, out.res.ResultMissing)
			}
		})
	}
}
