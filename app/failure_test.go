package app_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
)

// TestFailureClassOnEveryFailedTurn: a turn the runtime ended with a
// JSON-RPC error carries the class decided from the error's code and data
// (docs/behaviour.md#failures); the kind stays response_error and its
// retryability follows the class.
func TestFailureClassOnEveryFailedTurn(t *testing.T) {
	t.Parallel()
	h := start(t, script(t, "provider-failures.json"))
	cases := []struct {
		turn      string
		class     domain.FailureClass
		retryable bool
		status    int
		after     time.Duration
	}{
		{"#claude-429", domain.FailureRateLimited, true, 429, 0},
		{"#claude-billing", domain.FailureQuotaExhausted, false, 0, 0},
		{"#claude-too-long", domain.FailureContextOverflow, false, 0, 0},
		{"#claude-no-result", domain.FailureStreamDropped, true, 0, 0},
		{"#codex-quota", domain.FailureQuotaExhausted, false, 0, 0},
		{"#gemini-429", domain.FailureRateLimited, true, 429, 17 * time.Second},
		{"#auth", domain.FailureAuthFailed, false, 0, 0},
	}
	for _, c := range cases {
		res := h.turn(c.turn)
		require.Equal(t, domain.OutcomeFailed, res.Outcome, c.turn)
		assert.Equal(t, domain.KindResponseError, res.Err.Kind, c.turn)
		require.NotNil(t, res.Failure, c.turn)
		assert.Equal(t, c.class, res.Failure.Class, c.turn+": "+res.Failure.Evidence)
		assert.Equal(t, c.retryable, res.Failure.Retryable, c.turn)
		assert.Equal(t, c.retryable, res.Retryable(), c.turn)
		assert.Equal(t, c.status, res.Failure.ProviderStatus, c.turn)
		assert.Equal(t, c.after, res.Failure.RetryAfter, c.turn)
		assert.NotEmpty(t, res.Failure.Evidence, c.turn)
	}
	ok := h.turn("hello")
	require.Equal(t, domain.OutcomeCompleted, ok.Outcome, ok.Message())
	assert.Nil(t, ok.Failure, "a completed turn has no failure")
}

// TestRuntimeRetryingEvent: codex-acp 2.x's "Reconnecting... n/5"
// session_info_update is a runtime_retrying event with the class, status
// and attempt, not a session update with no event.
func TestRuntimeRetryingEvent(t *testing.T) {
	t.Parallel()
	h := start(t, script(t, "provider-failures.json"))
	res := h.turn("#codex-retrying")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	var got []domain.RuntimeRetry
	for _, ev := range h.rec.All() {
		if ev.Type == domain.EventRuntimeRetrying {
			require.NotNil(t, ev.Retry)
			got = append(got, *ev.Retry)
		}
	}
	require.Len(t, got, 2)
	assert.Equal(t, domain.RuntimeRetry{Class: domain.FailureRateLimited, Attempt: 2, MaxAttempts: 5, ProviderStatus: 429, Evidence: "Reconnecting... 2/5"}, got[1])
	assert.NotContains(t, h.logs.String(), "a session update with no event")
}

// TestTurnEndedWhileTheRuntimeRetries: a turn ended by its own bound while
// the runtime announced a retry of a rate limit carries that class, and
// the announced retry kept the stall timer from calling it a stall first.
func TestTurnEndedWhileTheRuntimeRetries(t *testing.T) {
	t.Parallel()
	h := start(t, script(t, "provider-failures.json"), withConfig(func(s *domain.SessionSettings) {
		s.TurnTimeout = 300 * time.Millisecond
	}))
	res := h.turn("#retrying-forever")
	require.Equal(t, domain.OutcomeFailed, res.Outcome)
	assert.Equal(t, domain.KindTurnTimeout, res.Err.Kind)
	require.NotNil(t, res.Failure)
	assert.Equal(t, domain.FailureRateLimited, res.Failure.Class, res.Failure.Evidence)
	assert.True(t, res.Failure.Retryable)
	assert.Contains(t, res.Failure.Evidence, "Retrying Claude, attempt 1 of 10.")
}

// TestFailureMarkerWins: a normal reply whose response carries the session
// failure extension's error record ends turn_failed with its class.
func TestFailureMarkerWins(t *testing.T) {
	t.Parallel()
	h := start(t, script(t, "provider-failures.json"))
	res := h.turn("#marker")
	require.Equal(t, domain.OutcomeFailed, res.Outcome)
	assert.Equal(t, domain.KindTurnFailed, res.Err.Kind)
	assert.Equal(t, domain.StopEndTurn, res.StopReason)
	require.NotNil(t, res.Failure)
	assert.Equal(t, domain.FailureQuotaExhausted, res.Failure.Class)
	assert.False(t, res.Retryable())
	assert.Equal(t, "All done, the tests pass.", res.Reply)
	shape := h.rec.Shape()
	assert.Equal(t, "turn_failed:"+res.Err.Message, shape[len(shape)-1])
}

// TestErrorTextInANormalReplyIsNoFailure: a runtime other than codex-acp
// 2.x replying with codex's error text completes.
func TestErrorTextInANormalReplyIsNoFailure(t *testing.T) {
	t.Parallel()
	h := start(t, script(t, "provider-failures.json"))
	for _, turn := range []string{"#error-text", "#prose"} {
		res := h.turn(turn)
		assert.Equal(t, domain.OutcomeCompleted, res.Outcome, turn)
		assert.Nil(t, res.Failure, turn)
	}
}

// TestCodexErrorReplyIsAFailure: codex-acp 2.6.0 reports a 429 after its
// own retries, a 503 and a context overflow as end_turn with the error's
// text as the whole reply; each ends turn_failed with its class. Prose
// around the same text completes.
func TestCodexErrorReplyIsAFailure(t *testing.T) {
	t.Parallel()
	h := start(t, script(t, "codex-error-reply.json"))
	cases := []struct {
		turn   string
		class  domain.FailureClass
		status int
	}{
		{"#429", domain.FailureRateLimited, 429},
		{"#503", domain.FailureOverloaded, 503},
		{"#overflow", domain.FailureContextOverflow, 0},
	}
	for _, c := range cases {
		res := h.turn(c.turn)
		require.Equal(t, domain.OutcomeFailed, res.Outcome, c.turn)
		assert.Equal(t, domain.KindTurnFailed, res.Err.Kind, c.turn)
		assert.Equal(t, domain.StopEndTurn, res.StopReason, c.turn)
		require.NotNil(t, res.Failure, c.turn)
		assert.Equal(t, c.class, res.Failure.Class, c.turn)
		assert.Equal(t, c.status, res.Failure.ProviderStatus, c.turn)
		assert.Equal(t, c.class.Retryable(), res.Retryable(), c.turn)
		shape := h.rec.Shape()
		assert.Equal(t, "turn_failed:"+res.Err.Message, shape[len(shape)-1], c.turn)
	}
	res := h.turn("#prose")
	assert.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.Nil(t, res.Failure)
}

// TestFailureChannelDeclared: Settings.FailureChannel declares the session
// failure extension in initialize's clientCapabilities._meta; it is not
// declared by default, nor together with Subagents.
func TestFailureChannelDeclared(t *testing.T) {
	t.Parallel()
	declared := func(opts ...option) string {
		h := start(t, nil, opts...)
		init := received(t, h.agentLg, "initialize")
		require.Len(t, init, 1)
		var m struct {
			Params struct {
				ClientCapabilities struct {
					Meta json.RawMessage `json:"_meta"`
				} `json:"clientCapabilities"`
			} `json:"params"`
		}
		require.NoError(t, json.Unmarshal(init[0].Message, &m))
		return string(m.Params.ClientCapabilities.Meta)
	}
	assert.Empty(t, declared())
	assert.JSONEq(t, `{"jetbrains":{"air":{"version":1,"capabilities":["sessionFailure"]}}}`,
		declared(withConfig(func(s *domain.SessionSettings) { s.FailureChannel = true })))
	assert.Empty(t, declared(withConfig(func(s *domain.SessionSettings) { s.FailureChannel, s.Subagents = true, true })))
}

// TestFailureMarkerWinsOnV2: on ACP v2 the record rides on the idle
// state_update (codex-acp 2.6.0's failed turn), and wins the same way.
func TestFailureMarkerWinsOnV2(t *testing.T) {
	t.Parallel()
	h := start(t, append(script(t, "provider-failures.json"), "--protocol", "2"), withConfig(func(s *domain.SessionSettings) {
		s.Protocol = domain.ProtocolV2
	}))
	res := h.turn("#marker")
	require.Equal(t, domain.OutcomeFailed, res.Outcome, res.Message())
	require.NotNil(t, res.Failure)
	assert.Equal(t, domain.FailureQuotaExhausted, res.Failure.Class)
}
