package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/proctest"
)

func TestStopClosesThroughProtocolWhenAdvertised(t *testing.T) {
	h := start(t, []string{"--scenario", "close"})
	res := h.turn("hi")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	h.stop()
	closes := received(t, h.agentLg, "session/close")
	require.Len(t, closes, 1)
	assert.Contains(t, string(closes[0].Message), `"sessionId":"ref-1"`)
	assert.NotContains(t, h.logs.String(), "force-terminated")
}

func TestStopWithoutCloseSendsNoClose(t *testing.T) {
	h := start(t, nil)
	h.turn("hi")
	h.stop()
	assert.Empty(t, received(t, h.agentLg, "session/close"))
	var sawTerm bool
	for _, r := range agentLog(t, h.agentLg) {
		sawTerm = sawTerm || r.Kind == "signal" || r.Kind == "eof"
	}
	assert.True(t, sawTerm, "the agent saw SIGTERM or the end of stdin")
}

func TestStopForceKillsAnAgentIgnoringSigterm(t *testing.T) {
	h := start(t, []string{"--scenario", "stubborn"}, withStopGrace(500*time.Millisecond))
	h.turn("hi")
	began := time.Now()
	h.stop()
	assert.Less(t, time.Since(began), 10*time.Second)
	assert.Contains(t, h.logs.String(), "agent did not exit inside the graceful period and was force-terminated")
	proctest.WaitGroupEmpty(t, h.sess.PID(), time.Second)
}

func TestStopIsIdempotentAndConcurrentSafe(t *testing.T) {
	h := start(t, nil)
	done := make(chan error, 2)
	for range 2 {
		go func() { done <- h.sess.Stop(context.Background()) }()
	}
	require.NoError(t, <-done)
	require.NoError(t, <-done)
}

func TestStopDuringTurnEndsIt(t *testing.T) {
	h := start(t, nil)
	resCh := make(chan domain.TurnResult, 1)
	go func() { resCh <- h.sess.Turn(context.Background(), "#wait-cancel") }()
	require.Eventually(t, func() bool { return len(received(t, h.agentLg, "session/prompt")) == 1 }, 10*time.Second, 10*time.Millisecond)
	h.stop()
	res := <-resCh
	assert.Equal(t, domain.KindPortExit, res.Err.Kind)
}

func TestStartFailureTearsDown(t *testing.T) {
	o, rec, _, _ := agentOptions(t, []string{"--scenario", "wrong-version"})
	_, err := app.Start(context.Background(), o)
	require.Error(t, err)
	pid := rec.OfType(domain.EventStartupFailed)[0].AgentPID
	proctest.WaitGroupEmpty(t, pid, 3*time.Second)
}
