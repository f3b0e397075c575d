package app_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

// withoutKeepAlives drops the empty notifications of streamed chunks,
// whose place around a test's Reset is not fixed.
func withoutKeepAlives(shape []string) []string {
	out := []string{}
	for _, s := range shape {
		if s != "message_chunk*" {
			out = append(out, s)
		}
	}
	return out
}

// TestRequestRightAfterThePromptResponseIsHeld: a permission request with
// no refusing option that arrives right after the prompt's response (no
// delay) belongs to no turn. The finished turn keeps its own outcome; the
// next turn emits the notice and ends turn_input_required without sending
// session/prompt (docs/behaviour.md#held-endings, S5). Run it with
// -count=20: the request may arrive before or after Turn returns.
func TestRequestRightAfterThePromptResponseIsHeld(t *testing.T) {
	t.Parallel()
	h := start(t, script(t, "held-after-response.json"))
	res := h.turn("first")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.Equal(t, "end_turn", res.StopReason)
	shape := h.rec.Shape()
	assert.Equal(t, "turn_completed", shape[len(shape)-1])
	assert.NotContains(t, shape, "notification:"+domain.MsgPermissionUngrantable, "the finished turn does not report the request")

	// Once the agent's report of the answer is read, the request was handled.
	h.waitText("permission outcome: cancelled")
	answers := received(t, h.agentLg, "session/request_permission")
	require.Len(t, answers, 1)
	assert.Contains(t, string(answers[0].Message), `"outcome":{"outcome":"cancelled"}`)

	res = h.turn("never sent")
	require.Equal(t, domain.OutcomeInputRequired, res.Outcome, res.Message())
	assert.Equal(t, domain.KindTurnInputRequired, res.Err.Kind)
	assert.Equal(t, domain.MsgInputRequired+": a permission request offered no option to refuse", res.Err.Message)
	// The agent's report of the answer is reported once: by the first turn
	// when it arrived before that turn finished, else before the second.
	all := withoutKeepAlives(h.rec.Shape())
	report := "notification:permission outcome: cancelled"
	n := 0
	for _, s := range all {
		if s == report {
			n++
		}
	}
	assert.Equal(t, 1, n, "%q", all)
	second := all[indexOf(all, "turn_completed")+1:]
	if len(second) > 0 && second[0] == report {
		second = second[1:]
	}
	assert.Equal(t, []string{
		"session_started:session started",
		`permission_decision:person execute "Push to origin" (preset refuse)`,
		"notification:" + domain.MsgPermissionUngrantable,
		"turn_input_required:" + res.Err.Message,
	}, second)
	assert.Len(t, received(t, h.agentLg, "session/prompt"), 1, "the held ending sent no prompt")
	assert.Empty(t, received(t, h.agentLg, "session/cancel"))
}

// TestMessageAfterTheLastTurnIsReported: text sent after the last turn's
// response is reported as a notification when the stream ends (here: by
// Stop), and LastMessage follows it (docs/behaviour.md#messages).
func TestMessageAfterTheLastTurnIsReported(t *testing.T) {
	t.Parallel()
	h := start(t, script(t, "message-after-turn.json"))
	res := h.turn("go")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	h.waitText("After the turn.")
	assert.NotContains(t, h.rec.Shape(), "notification:After the turn.", "not reported while it may go on")
	h.stop()
	assert.Contains(t, h.rec.Shape(), "notification:After the turn.")
	assert.Equal(t, "After the turn.", h.sess.LastMessage().Text)
}

// TestMessageBeforeAnExitBetweenTurnsIsReported: a message sent right
// before the runtime exits between turns is reported when its stream
// ends, without waiting for a turn or Stop.
func TestMessageBeforeAnExitBetweenTurnsIsReported(t *testing.T) {
	t.Parallel()
	h := start(t, script(t, "message-after-turn.json"))
	res := h.turn("#exit")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	require.Eventually(t, func() bool {
		return indexOf(h.rec.Shape(), "notification:Last words before exiting.") >= 0
	}, waitFor, time.Millisecond, "%q", h.rec.Shape())
	assert.Equal(t, "Last words before exiting.", h.sess.LastMessage().Text)
	last := h.rec.OfType(domain.EventNotification)
	assert.Equal(t, "Last words before exiting.", last[len(last)-1].Message)
	// The next turn finds the connection gone.
	res = h.turn("after the exit")
	assert.Equal(t, domain.KindPortExit, res.Err.Kind)
	assert.Equal(t, domain.MsgConnEndedBeforeResult, res.Err.Message)
}

// TestPromptResponseWithResultAndError (decision 3): neither member can be
// trusted, so the turn's outcome is unknown.
func TestPromptResponseWithResultAndError(t *testing.T) {
	t.Parallel()
	h := start(t, script(t, "ambiguous-response.json"))
	res := h.turn("go")
	require.Equal(t, domain.OutcomeFailed, res.Outcome, res.Message())
	assert.Empty(t, res.StopReason)
	assert.Equal(t, domain.KindTurnOutcomeUnknown, res.Err.Kind)
	assert.Equal(t, domain.MsgPromptAmbiguous, res.Err.Message)
	assert.ErrorIs(t, res.Err, jsonrpc.ErrAmbiguousResponse)
	shape := h.rec.Shape()
	assert.Equal(t, "turn_ended_with_error:"+domain.MsgPromptAmbiguous, shape[len(shape)-1])
	assert.NotContains(t, shape, "malformed:"+domain.MsgUnparseableLine, "the answer is not a malformed line")
	assert.Empty(t, received(t, h.agentLg, "session/cancel"))
}

// TestErrorDataReachesTheOperator (decision 8): the data of a JSON-RPC
// error answering session/prompt is part of the operator's message, and
// the original error stays reachable.
func TestErrorDataReachesTheOperator(t *testing.T) {
	t.Parallel()
	h := start(t, script(t, "error-data.json"))
	res := h.turn("go")
	require.Equal(t, domain.OutcomeFailed, res.Outcome, res.Message())
	assert.Equal(t, domain.KindResponseError, res.Err.Kind)
	assert.Equal(t, `session/prompt error -32603: Internal error (data: {"status":429,"body":"rate limited"})`, res.Err.Message)
	var rpcErr *jsonrpc.Error
	require.True(t, errors.As(res.Err, &rpcErr))
	assert.EqualValues(t, -32603, rpcErr.Code)
	assert.JSONEq(t, `{"status":429,"body":"rate limited"}`, string(rpcErr.Data))
	shape := h.rec.Shape()
	assert.Equal(t, "turn_ended_with_error:"+res.Err.Message, shape[len(shape)-1])

	// data null is left out.
	res = h.turn("#null-data")
	assert.Equal(t, "session/prompt error -32603: Internal error", res.Err.Message)
}

// TestStartupErrorDataReachesTheOperator: the same rule for session/new.
func TestStartupErrorDataReachesTheOperator(t *testing.T) {
	t.Parallel()
	o, rec, _, _ := agentOptions(t, script(t, "new-error-data.json"))
	ae := startErr(t, o, rec)
	assert.Equal(t, domain.KindResponseError, ae.Kind)
	assert.Equal(t, "session/new error -32000: Authentication required (data: "+strings.Repeat("x", 499)+"…)", ae.Message)
}

// TestPermissionRequestWithBadParams (decision 4): params null, missing or
// undecodable are answered -32602 and the session goes on.
func TestPermissionRequestWithBadParams(t *testing.T) {
	t.Parallel()
	h := start(t, script(t, "permission-params.json"))
	res := h.turn("go")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	require.Eventually(t, func() bool {
		n := 0
		for _, r := range agentLog(t, h.agentLg) {
			if r.Kind == "response" && strings.Contains(string(r.Message), `"code":-32602`) {
				n++
			}
		}
		return n == 3
	}, waitFor, 2*time.Millisecond)
	for _, r := range agentLog(t, h.agentLg) {
		if r.Kind == "response" {
			assert.Contains(t, string(r.Message), `"message":"Invalid params"`)
		}
	}
	shape := h.rec.Shape()
	assert.NotContains(t, shape, "notification:"+domain.MsgPermissionUngrantable)
	assert.NotContains(t, shape, "notification:"+domain.MsgPermissionRefused)
	assert.Contains(t, h.logs.String(), "agent sent a request with invalid params")
	// The session goes on.
	res = h.turn("again")
	assert.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
}
