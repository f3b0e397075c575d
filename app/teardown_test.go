package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/proctest"
	"github.com/acpdrive/acpdrive/refagent"
)

func TestStopClosesThroughProtocolWhenAdvertised(t *testing.T) {
	t.Parallel()
	h := start(t, []string{"--scenario", "close"})
	res := h.turn("hi")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	h.stop()
	closes := received(t, h.agentLg, "session/close")
	require.Len(t, closes, 1)
	assert.Contains(t, string(closes[0].Message), `"sessionId":"ref-1"`)
	assert.NotContains(t, h.logs.String(), "force-terminated")
}

// TestStopClosesStdinFirst: an agent that exits at the end of its stdin is
// never signalled (docs/behaviour.md#teardown, decision 1).
func TestStopClosesStdinFirst(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	h.turn("hi")
	h.stop()
	assert.Empty(t, received(t, h.agentLg, "session/close"), "not advertised")
	var kinds []string
	for _, r := range agentLog(t, h.agentLg) {
		kinds = append(kinds, r.Kind)
	}
	assert.Contains(t, kinds, "eof")
	assert.NotContains(t, kinds, "signal")
}

// logTime is when the agent logged its first record of kind.
func logTime(t *testing.T, recs []refagent.LogRecord, kind string) time.Time {
	t.Helper()
	for _, r := range recs {
		if r.Kind == kind {
			at, err := time.Parse(time.RFC3339Nano, r.Time)
			require.NoError(t, err)
			return at
		}
	}
	t.Fatalf("no %s record in %+v", kind, recs)
	return time.Time{}
}

// TestStopWaitsOneSecondBeforeSigterm drives a real process that keeps
// running after its stdin ends: SIGTERM follows the end of stdin after the
// 1 s exit window, and the agent exits on it within the grace.
func TestStopWaitsOneSecondBeforeSigterm(t *testing.T) {
	t.Parallel()
	h := startProc(t, []string{"--scenario", "ignore-eof"})
	res := h.turn("hi")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	for _, ev := range h.rec.All() {
		assert.Equal(t, h.sess.PID(), ev.AgentPID, "a real process's events carry its PID")
	}
	require.NotZero(t, h.sess.PID())
	h.stop()
	recs := agentLog(t, h.agentLg)
	window := logTime(t, recs, "signal").Sub(logTime(t, recs, "eof"))
	assert.GreaterOrEqual(t, window, 900*time.Millisecond, "SIGTERM came %v after the end of stdin", window)
	assert.NotContains(t, h.logs.String(), "force-terminated")
}

func TestStopForceKillsAnAgentIgnoringSigterm(t *testing.T) {
	t.Parallel()
	const grace = 500 * time.Millisecond
	h := startProc(t, []string{"--scenario", "stubborn"}, withStopGrace(grace))
	h.turn("hi")
	began := time.Now()
	h.stop()
	took := time.Since(began)
	assert.GreaterOrEqual(t, took, grace, "the grace is waited out")
	assert.Contains(t, h.logs.String(), "agent did not exit inside the graceful period and was force-terminated")
	assert.Contains(t, h.logs.String(), "stop_grace=500ms")
	proctest.WaitGroupEmpty(t, h.sess.PID(), time.Second)
}

func TestStopIsIdempotentAndConcurrentSafe(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	done := make(chan error, 2)
	for range 2 {
		go func() { done <- h.sess.Stop(context.Background()) }()
	}
	require.NoError(t, <-done)
	require.NoError(t, <-done)
	require.NoError(t, h.sess.Stop(context.Background()), "a later call returns the first result")
}

func TestStopDuringTurnEndsIt(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	resCh := h.turnAsync(context.Background(), "#wait-cancel")
	h.waitReceived("session/prompt", 1)
	h.stop()
	res := <-resCh
	assert.Equal(t, domain.KindPortExit, res.Err.Kind)
	assert.Equal(t, domain.MsgConnEndedBeforeResult, res.Err.Message)
}

func TestStartFailureTearsDown(t *testing.T) {
	t.Parallel()
	o, rec, _, _ := procOptions(t, []string{"--scenario", "wrong-version"})
	_, err := app.Start(context.Background(), o)
	require.Error(t, err)
	pid := rec.OfType(domain.EventStartupFailed)[0].AgentPID
	require.NotZero(t, pid)
	proctest.WaitGroupEmpty(t, pid, 3*time.Second)
}
