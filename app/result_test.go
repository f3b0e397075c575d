package app_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
)

// resultSchema is the output schema of these tests: done (a boolean) is
// required.
const resultSchema = `{"type":"object","properties":{"done":{"type":"boolean"},"branch":{"type":"string"}},"required":["done"]}`

func withSchema(retries int) option {
	return withConfig(func(s *domain.SessionSettings) {
		s.OutputSchema = json.RawMessage(resultSchema)
		s.OutputRetries = retries
	})
}

// promptTexts are the texts of the prompts the agent received.
func promptTexts(t *testing.T, h *harness) []string {
	t.Helper()
	var out []string
	for _, r := range received(t, h.agentLg, "session/prompt") {
		if r.Method == "session/prompt" {
			out = append(out, string(r.Message))
		}
	}
	return out
}

// TestStructuredResultFromReply: a reply ending with a fenced JSON block
// valid against the schema is the turn's result, source reply; the prompt
// carried the instruction (docs/behaviour.md#structured-results).
func TestStructuredResultFromReply(t *testing.T) {
	t.Parallel()
	h := start(t, script(t, "structured-result.json"), withSchema(0))
	res := h.turn("#result go")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome)
	require.JSONEq(t, `{"done":true,"branch":"fix-32"}`, string(res.Result))
	require.Equal(t, domain.ResultSourceReply, res.ResultSource)
	require.Empty(t, res.ResultMissing)
	prompts := promptTexts(t, h)
	require.Len(t, prompts, 1)
	require.Contains(t, prompts[0], "valid against this JSON Schema")
}

// TestStructuredResultFollowUp: a result that does not validate sends one
// follow-up prompt (OutputRetries 1), and the follow-up's result is the
// turn's.
func TestStructuredResultFollowUp(t *testing.T) {
	t.Parallel()
	h := start(t, script(t, "structured-result.json"), withSchema(1))
	res := h.turn("go")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome)
	require.JSONEq(t, `{"done":true,"branch":"fix-32"}`, string(res.Result), res.ResultMissing)
	require.Equal(t, domain.ResultSourceReply, res.ResultSource)
	prompts := promptTexts(t, h)
	require.Len(t, prompts, 2)
	require.Contains(t, prompts[1], "did not deliver the result")
}

// TestStructuredResultMissing: no valid result after the bounded
// follow-ups is result_missing with the last validation error; the turn's
// outcome is unchanged.
func TestStructuredResultMissing(t *testing.T) {
	t.Parallel()
	h := start(t, script(t, "structured-result.json"), withSchema(1))
	res := h.turn("#prose go")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome)
	require.Nil(t, res.Result)
	require.Empty(t, res.ResultSource)
	require.True(t, strings.HasPrefix(res.ResultMissing, domain.MsgResultInvalidPrefix), res.ResultMissing)
	require.Contains(t, res.ResultMissing, "done")
	require.Len(t, promptTexts(t, h), 2, "one follow-up, no more")

	h2 := start(t, script(t, "structured-result.json"), withSchema(0))
	res = h2.turn("#prose go")
	require.Equal(t, domain.MsgResultNoJSON, res.ResultMissing)
	require.Len(t, promptTexts(t, h2), 1, "no follow-up without OutputRetries")
}

// TestStructuredResultNoSchema: without a schema the prompt is sent as
// given and no result is reported.
func TestStructuredResultNoSchema(t *testing.T) {
	t.Parallel()
	h := start(t, script(t, "structured-result.json"))
	res := h.turn("#result go")
	require.Nil(t, res.Result)
	require.Empty(t, res.ResultMissing)
	require.NotContains(t, promptTexts(t, h)[0], "JSON Schema")
}

// TestOutputSchemaRefusedAtStart: a schema that does not compile, or does
// not describe an object, refuses the start with agent_not_found and the
// library's text; nothing is launched.
func TestOutputSchemaRefusedAtStart(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ schema, want string }{
		{`{"type":"object","properties":{"a":{"$ref":"#/nowhere"}}}`, "nowhere"},
		{`{"type":"objekt"}`, "not an object schema"},
		{`{"type":"object","minProperties":"two"}`, "cannot be unmarshaled"},
		{`{"type":"array"}`, "not an object schema"},
		{`{"type":`, "unexpected end"},
	} {
		o, _, _, _ := agentOptions(t, nil, withConfig(func(s *domain.SessionSettings) { s.OutputSchema = json.RawMessage(c.schema) }))
		_, err := app.Start(context.Background(), o)
		require.Error(t, err, c.schema)
		var ae *domain.AgentError
		require.ErrorAs(t, err, &ae)
		require.Equal(t, domain.KindAgentNotFound, ae.Kind, c.schema)
		require.Contains(t, err.Error(), app.MsgOutputSchema+": ")
		require.Contains(t, err.Error(), c.want)
		_, cerr := app.CompileOutputSchema(json.RawMessage(c.schema))
		require.Error(t, cerr)
	}
}
