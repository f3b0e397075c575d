package app_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
)

func withAnswers(a domain.Answers) option {
	return func(o *app.Options) { o.Answers = a }
}

// questions are the elicitation events of a session.
func questions(t *testing.T, h *harness) []domain.ElicitationInfo {
	t.Helper()
	var out []domain.ElicitationInfo
	for _, ev := range h.rec.OfType(domain.EventElicitation) {
		require.NotNil(t, ev.Elicitation, "an elicitation event carries the question")
		out = append(out, *ev.Elicitation)
	}
	return out
}

// initializeCapabilities is the clientCapabilities the agent received.
func initializeCapabilities(t *testing.T, h *harness) map[string]json.RawMessage {
	t.Helper()
	inits := received(t, h.agentLg, "initialize")
	require.NotEmpty(t, inits)
	var req struct {
		Params struct {
			ClientCapabilities map[string]json.RawMessage `json:"clientCapabilities"`
		} `json:"params"`
	}
	require.NoError(t, json.Unmarshal(inits[0].Message, &req))
	return req.Params.ClientCapabilities
}

// TestElicitationAnsweredByThePolicy: with an answers policy, acpdrive
// offers the form mode, fills the form in, reports the question, and the
// turn goes on to its own end.
func TestElicitationAnsweredByThePolicy(t *testing.T) {
	t.Parallel()
	h := startProc(t, script(t, "elicitation-answers.json"),
		withAnswers(domain.Answers{Fields: map[string]any{"branch": "dev"}}))
	assert.JSONEq(t, `{"form":{}}`, string(initializeCapabilities(t, h)["elicitation"]))

	res := h.turn("#ask")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.Nil(t, res.Question)
	assert.Contains(t, h.rec.Text(), "Going on.")

	qs := questions(t, h)
	require.Len(t, qs, 1)
	q := qs[0]
	assert.Equal(t, domain.ElicitAccept, q.Action)
	assert.Equal(t, []string{"branch"}, q.Fields)
	assert.Equal(t, "Which branch should I push to?", q.Message)
	assert.Equal(t, domain.ElicitModeForm, q.Mode)
	assert.Equal(t, domain.PermissionParent, q.Session)
	assert.Equal(t, domain.ElicitByAnswers, q.By)
	assert.Contains(t, string(q.Schema), `"Push target"`)

	answers := received(t, h.agentLg, "elicitation/create")
	require.Len(t, answers, 1)
	var reply struct {
		Result map[string]any `json:"result"`
	}
	require.NoError(t, json.Unmarshal(answers[0].Message, &reply))
	assert.Equal(t, map[string]any{"action": "accept", "content": map[string]any{"branch": "dev"}}, reply.Result)
}

// TestElicitationDeclinedNeedsAPerson: a question the policy cannot answer
// is declined, the turn ends turn_input_required with the question on its
// result, and the next question in the same turn is cancelled.
func TestElicitationDeclinedNeedsAPerson(t *testing.T) {
	t.Parallel()
	h := startProc(t, script(t, "elicitation-answers.json"),
		withAnswers(domain.Answers{Fields: map[string]any{"release": "r1"}}))

	res := h.turn("#ask-twice")
	require.Equal(t, domain.OutcomeInputRequired, res.Outcome, res.Message())
	require.NotNil(t, res.Question)
	assert.Equal(t, domain.ElicitDecline, res.Question.Action)
	assert.Equal(t, `no answer for the required field "branch"`, res.Question.Reason)
	assert.Equal(t, "Which branch should I push to?", res.Question.Message)

	qs := questions(t, h)
	require.NotEmpty(t, qs)
	assert.Equal(t, *res.Question, qs[0])
	// A question is reported when its answer is decided; the runtime logs
	// the answer when it reads it, which may be after the turn returned.
	h.waitReceived("elicitation/create", len(qs))
	answers := received(t, h.agentLg, "elicitation/create")
	require.Len(t, answers, len(qs))
	assert.Contains(t, string(answers[0].Message), `"action":"decline"`)
	assert.NotContains(t, string(answers[0].Message), `"content"`)
	// Whether the runtime asks its second question before it sees the
	// cancel is its own timing; asked, it is cancelled, not answered.
	if len(qs) > 1 {
		assert.Equal(t, domain.ElicitCancel, qs[1].Action)
		assert.Equal(t, domain.ElicitByEndingPending, qs[1].By)
		assert.Contains(t, string(answers[1].Message), `"action":"cancel"`)
	}
	// The notice follows the question.
	asked, notified := -1, -1
	for i, ev := range h.rec.All() {
		switch {
		case ev.Type == domain.EventElicitation && asked < 0:
			asked = i
		case ev.Type == domain.EventNotification && ev.Message == domain.MsgElicitation && notified < 0:
			notified = i
		}
	}
	require.GreaterOrEqual(t, asked, 0)
	assert.Less(t, asked, notified, "%v", h.rec.Shape())
}

// TestElicitationURLModeIsNeverOpened: acpdrive offers no url mode; a
// url-mode question is answered -32602 and needs a person.
func TestElicitationURLModeIsNeverOpened(t *testing.T) {
	t.Parallel()
	h := startProc(t, script(t, "elicitation-answers.json"),
		withAnswers(domain.Answers{Fields: map[string]any{"branch": "dev"}}))
	res := h.turn("#ask-url")
	require.Equal(t, domain.OutcomeInputRequired, res.Outcome, res.Message())
	require.NotNil(t, res.Question)
	assert.Equal(t, domain.ElicitUnanswered, res.Question.Action)
	assert.Equal(t, domain.ElicitByModeNotOffered, res.Question.By)
	answers := received(t, h.agentLg, "elicitation/create")
	require.Len(t, answers, 1)
	assert.Contains(t, string(answers[0].Message), `"code":-32602`)
}

// TestElicitationWithoutAPolicy: no policy, no offer; the question is
// still reported and carried on the result.
func TestElicitationWithoutAPolicy(t *testing.T) {
	t.Parallel()
	h := startProc(t, script(t, "elicitation-answers.json"))
	_, offered := initializeCapabilities(t, h)["elicitation"]
	assert.False(t, offered, "elicitation is offered only with a policy")
	res := h.turn("#ask-twice")
	require.Equal(t, domain.OutcomeInputRequired, res.Outcome, res.Message())
	require.NotNil(t, res.Question)
	assert.Equal(t, domain.ElicitUnanswered, res.Question.Action)
	assert.Equal(t, domain.ElicitByNoPolicy, res.Question.By)
	assert.Equal(t, "Which branch should I push to?", res.Question.Message)
	answers := received(t, h.agentLg, "elicitation/create")
	require.NotEmpty(t, answers)
	assert.Contains(t, string(answers[0].Message), `"code":-32601`)
}
