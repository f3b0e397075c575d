package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
)

// steerKind asserts err's kind and message.
func steerKind(t *testing.T, err error, kind domain.ErrorKind, msg string) {
	t.Helper()
	require.Error(t, err)
	k, ok := domain.KindOf(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, kind, k)
	assert.Contains(t, err.Error(), msg)
}

// A steer sent while a turn runs goes out as _session/steering, the turn
// takes it, the stream shows steered before the turn's outcome, and the
// turn ends normally (docs/behaviour.md#steering).
func TestSteerDuringTurn(t *testing.T) {
	h := start(t, []string{"--scenario", "steering"})
	require.True(t, h.sess.AgentInfo().Advertised.Steering)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := h.turnAsync(ctx, "work on it")
	h.waitText("Waiting for a steer.")
	require.NoError(t, h.sess.Steer(ctx, "stop and commit what you have"))
	res := <-done
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.Contains(t, res.Reply, "steered: stop and commit what you have")

	steered := h.rec.OfType(domain.EventSteered)
	require.Len(t, steered, 1)
	assert.Equal(t, "stop and commit what you have", steered[0].Message)
	recs := received(t, h.agentLg, acpwire.MethodSessionSteering)
	require.Len(t, recs, 1)
	assert.Contains(t, string(recs[0].Message), `"idleBehavior":"promptRequired"`)
	assert.Contains(t, string(recs[0].Message), h.sess.ID())
}

// Between turns a steer is refused and nothing is sent.
func TestSteerBetweenTurnsRefused(t *testing.T) {
	h := start(t, []string{"--scenario", "steering"})
	ctx := context.Background()
	steerKind(t, h.sess.Steer(ctx, "too early"), domain.KindResponseError, domain.MsgSteerNoTurn)
	assert.Empty(t, received(t, h.agentLg, acpwire.MethodSessionSteering))
	assert.Empty(t, h.rec.OfType(domain.EventSteered))
}

// A runtime that does not advertise steering gets nothing: the steer is
// refused as agent_not_found, reason not_offered; or, in SteerOrQueue
// mode, queued at the start of the next prompt.
func TestSteerNotAdvertised(t *testing.T) {
	h := start(t, nil)
	require.False(t, h.sess.AgentInfo().Advertised.Steering)
	ctx := context.Background()
	err := h.sess.Steer(ctx, "mind the tests")
	steerKind(t, err, domain.KindAgentNotFound, domain.MsgSteerNotOffered)
	assert.Equal(t, domain.ReasonNotOffered, domain.ReasonOf(err))

	assert.ErrorIs(t, h.sess.Steer(ctx, "mind the tests", app.SteerOrQueue), domain.ErrSteerQueued)
	res := h.turn("go on")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.Equal(t, "mind the tests\n\ngo on", res.Reply)
	assert.Empty(t, received(t, h.agentLg, acpwire.MethodSessionSteering))
	assert.Empty(t, h.rec.OfType(domain.EventSteered))
}
