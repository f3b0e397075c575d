package app_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
)

// TestTurnResultCarriesTheWholeReply: the turn's result carries the
// agent's last message of the turn, whole (beyond the 500 runes of
// LastMessage), and only the last one when the turn sent two
// (docs/behaviour.md#turn-disposition).
func TestTurnResultCarriesTheWholeReply(t *testing.T) {
	t.Parallel()
	t.Run("v1", func(t *testing.T) { t.Parallel(); replyTurns(t, start(t, nil)) })
	t.Run("v2", func(t *testing.T) {
		t.Parallel()
		replyTurns(t, start(t, []string{"--protocol", "2"},
			withConfig(func(s *domain.SessionSettings) { s.Protocol = domain.ProtocolV2 })))
	})
}

func replyTurns(t *testing.T, h *harness) {
	long := strings.Repeat("é", 2000) + " end"
	res := h.turn(long)
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.Equal(t, long, res.Reply)
	assert.False(t, res.ReplyCut)
	assert.Len(t, []rune(h.sess.LastMessage().Text), domain.MessageCap, "LastMessage stays capped")

	res = h.turn("#two-messages")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.Equal(t, "The second message, in two chunks.", res.Reply)

	res = h.turn("#tools")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.NotContains(t, res.Reply, "second message", "a turn's reply is its own")
}

// TestNotificationOrigin: the agent's message and acpdrive's own notices,
// both notification events, are told apart by Origin
// (docs/behaviour.md#events).
func TestNotificationOrigin(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	res := h.turn("hello")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	res = h.turn("#permission-refusable")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	origins := map[string]string{}
	for _, ev := range h.rec.OfType(domain.EventNotification) {
		origins[ev.Message] = ev.Origin
	}
	assert.Equal(t, domain.OriginAgent, origins["hello"], "%v", origins)
	assert.Equal(t, domain.OriginAcpdrive, origins[domain.MsgPermissionRefused], "%v", origins)
	for msg, origin := range origins {
		if strings.HasPrefix(msg, domain.MsgCapabilityGapNotice) {
			assert.Equal(t, domain.OriginAcpdrive, origin)
		}
		assert.NotEmpty(t, origin, "notification %q carries no origin", msg)
	}
}

// TestCallerDeadlineIsTheCallers: a turn ended by the caller's own
// context deadline says so, distinct from turn_timeout_ms
// (docs/behaviour.md#overrides).
func TestCallerDeadlineIsTheCallers(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	res := h.sess.Turn(ctx, "#wait-cancel")
	require.Equal(t, domain.OutcomeFailed, res.Outcome, res.Message())
	assert.Equal(t, domain.KindTurnTimeout, res.Err.Kind)
	assert.Equal(t, domain.MsgCallerDeadline, res.Err.Message)
	closing := h.rec.All()[len(h.rec.All())-1]
	assert.Equal(t, domain.EventTurnEndedWithError, closing.Type)
	assert.Equal(t, domain.MsgCallerDeadline, closing.Message)
}

// TestClosingEventCarriesTheResultsOutcome: every closing event names the
// result's outcome in the result's words, also where its type is
// turn_ended_with_error (docs/behaviour.md#turn-disposition).
func TestClosingEventCarriesTheResultsOutcome(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	for _, prompt := range []string{"hello", "#stop-refusal", "#prompt-error", "#bad-result"} {
		h.rec.Reset()
		res := h.turn(prompt)
		all := h.rec.All()
		closing := all[len(all)-1]
		assert.Equal(t, res.Outcome, closing.Outcome, prompt)
		assert.Equal(t, res.Event().Type, closing.Type, prompt)
	}
}

// TestTurnAfterStopIsRefusedForGood: a stopped session refuses a turn with
// an error that says so and is not retryable; nothing is sent.
func TestTurnAfterStopIsRefusedForGood(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	require.Equal(t, domain.OutcomeCompleted, h.turn("hello").Outcome)
	require.NoError(t, h.sess.Stop(context.Background()))
	h.rec.Reset()
	res := h.turn("after the stop")
	require.NotNil(t, res.Err)
	assert.False(t, res.Err.Kind.Retryable(), "kind %s", res.Err.Kind)
	assert.Equal(t, domain.MsgSessionStopped, res.Err.Message)
	assert.True(t, errors.Is(res.Err, domain.KindTurnCancelled))
	assert.Empty(t, h.rec.All(), "a refused turn emits nothing")
}

// TestSessionTotals: the session sums its turns' usage figure by figure
// and their cost per currency (docs/behaviour.md#token-accounting).
func TestSessionTotals(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	res := h.turn(`#usage-wire {"used":3014,"size":1000000,"cost":{"amount":0.01,"currency":"USD"}}`)
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	res = h.turn(`#usage-wire {"used":6028,"size":1000000,"cost":{"amount":0.025,"currency":"USD"}}`)
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	require.Equal(t, domain.OutcomeCompleted, h.turn("hello").Outcome)
	tot := h.sess.Totals()
	assert.Equal(t, 3, tot.Turns)
	assert.Equal(t, 2, tot.Measured)
	assert.Equal(t, wireClaude.Add(wireClaude), tot.Usage)
	assert.InDelta(t, 0.025, tot.Cost["USD"], 1e-9)
	assert.Equal(t, "3 turn(s); tokens: 3466 in, 122 out, cache 2018 read / 422 written, 6028 total over 2 measured turn(s); cost 0.0250 USD", tot.String())
}
