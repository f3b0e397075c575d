package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/sysclock"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/refagent"
)

// stoppedNow is the system clock whose Now stands still: a usage window's
// reset is measured from it (docs/behaviour.md#usage-windows).
type stoppedNow struct {
	sysclock.Clock
	at time.Time
}

func (c stoppedNow) Now() time.Time { return c.at }

// TestReferenceAgentFailureTurns: each of the reference agent's named
// provider failures ends with its class, retryability, status and
// retry_after (docs/reference-agent.md#provider-failures), under any
// scenario.
func TestReferenceAgentFailureTurns(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 7, 17, 0, 0, 0, time.UTC)
	h := start(t, nil, func(o *app.Options) { o.Clock = stoppedNow{at: now} })
	cases := []struct {
		turn      string
		class     domain.FailureClass
		retryable bool
		status    int
		after     time.Duration
	}{
		{"#failure-rate-limit", domain.FailureRateLimited, true, 429, 17 * time.Second},
		{"#failure-overloaded", domain.FailureOverloaded, true, 529, 0},
		{"#failure-quota", domain.FailureQuotaExhausted, false, 0, 0},
		{"#failure-credentials", domain.FailureAuthFailed, false, 400, 0},
		{"#failure-context-overflow", domain.FailureContextOverflow, false, 0, 0},
		{"#failure-usage-window", domain.FailureQuotaExhausted, true, 0, 32 * time.Minute},
	}
	for _, c := range cases {
		res := h.turn(c.turn)
		require.Equal(t, domain.OutcomeFailed, res.Outcome, c.turn)
		assert.Equal(t, domain.KindResponseError, res.Err.Kind, c.turn)
		require.NotNil(t, res.Failure, c.turn)
		assert.Equal(t, c.class, res.Failure.Class, c.turn+": "+res.Failure.Evidence)
		assert.Equal(t, c.retryable, res.Retryable(), c.turn)
		assert.Equal(t, c.status, res.Failure.ProviderStatus, c.turn)
		assert.Equal(t, c.after, res.Failure.RetryAfter, c.turn)
	}
}

// TestReferenceAgentRetryingTurn: the reference agent's announced retry
// gives a turn its own bound ended the retried failure's class.
func TestReferenceAgentRetryingTurn(t *testing.T) {
	t.Parallel()
	h := start(t, nil, withConfig(func(s *domain.SessionSettings) { s.TurnTimeout = 300 * time.Millisecond }))
	res := h.turn("#failure-retrying")
	require.Equal(t, domain.OutcomeFailed, res.Outcome)
	assert.Equal(t, domain.KindTurnTimeout, res.Err.Kind)
	require.NotNil(t, res.Failure)
	assert.Equal(t, domain.FailureRateLimited, res.Failure.Class, res.Failure.Evidence)
	assert.True(t, res.Retryable())
}

// TestRetrierWaitsForAUsageWindowsReset: a spent usage window is retried
// no sooner than its reset, whatever the back-off's cap, and only when the
// policy's total wait allows it (docs/behaviour.md#usage-windows).
func TestRetrierWaitsForAUsageWindowsReset(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 7, 17, 0, 0, 0, time.UTC)
	stopped := func(o *app.Options) { o.Clock = stoppedNow{at: now} }

	h := start(t, script(t, "usage-window.json"), stopped)
	out := retryTurn(t, h, app.Retrier{Policy: app.RetryPolicy{MaxRetries: 2, MaxBackoff: time.Second}, Options: h.opts}, "go")
	require.NoError(t, out.err)
	require.Equal(t, domain.OutcomeCompleted, out.res.Outcome, out.res.Message())
	require.Len(t, out.waits, 1)
	assert.Equal(t, 32*time.Minute, out.waits[0].Wait, "the reset, not the 1 s back-off cap")
	assert.True(t, out.waits[0].FromRuntime)
	assert.Equal(t, domain.FailureQuotaExhausted, out.waits[0].Result.Failure.Class)

	h = start(t, script(t, "usage-window.json"), stopped)
	out = retryTurn(t, h, app.Retrier{Policy: app.RetryPolicy{MaxRetries: 2, MaxWait: 30 * time.Minute}, Options: h.opts}, "go")
	require.Equal(t, domain.OutcomeFailed, out.res.Outcome)
	assert.Equal(t, domain.FailureQuotaExhausted, out.res.Failure.Class)
	assert.Empty(t, out.waits, "a 32 min reset passes a 30 min budget")
	assert.Len(t, received(t, h.agentLg, "session/prompt"), 1)
}

// journalSource is a fakeSource whose measurement keeps a journal of the
// runtime's own retries (ports.RetryJournal), as Claude Code's transcript.
type journalSource struct {
	*fakeSource
	retries []domain.RuntimeRetry
}

func (j journalSource) Arm(ctx context.Context) (ports.Measurement, error) {
	m, err := j.fakeSource.Arm(ctx)
	return journalMeasurement{Measurement: m, retries: j.retries}, err
}

type journalMeasurement struct {
	ports.Measurement
	retries []domain.RuntimeRetry
}

func (j journalMeasurement) TurnRetries(string, time.Time) []domain.RuntimeRetry { return j.retries }

// TestRetriesFromTheRuntimesJournal: the runtime's own retries its journal
// recorded are runtime_retrying events when no signal reached the wire; a
// turn its bound ended carries the retried failure's class, and a rate
// limit the runtime gave up on whose journal names a spent usage window
// is quota_exhausted with the wait to its reset
// (docs/behaviour.md#runtime-retrying).
func TestRetriesFromTheRuntimesJournal(t *testing.T) {
	t.Parallel()
	rate := domain.RuntimeRetry{Class: domain.FailureRateLimited, Attempt: 1, MaxAttempts: 10, WaitMS: 17000, ProviderStatus: 429, Evidence: "Claude Code's transcript: API error 429"}
	window := domain.RuntimeRetry{Class: domain.FailureQuotaExhausted, Attempt: 2, MaxAttempts: 10, WaitMS: 34000, ProviderStatus: 429,
		RetryAfterMS: (32 * time.Minute).Milliseconds(), Evidence: "Claude Code's transcript: API error 429, usage window five_hour resets at 2026-12-07T17:32:00Z"}
	session := func(t *testing.T, retries ...domain.RuntimeRetry) *harness {
		src := journalSource{fakeSource: &fakeSource{name: "ref", runtime: refagent.AgentName, claimWord: "acpdrive-reference-agent"}, retries: retries}
		o, rec, logs, agentLog := agentOptions(t, nil)
		o.MeasurementSources = []ports.MeasurementSource{src}
		return startWith(t, o, rec, logs, agentLog)
	}
	retrying := func(h *harness) []domain.RuntimeRetry {
		var got []domain.RuntimeRetry
		for _, ev := range h.rec.OfType(domain.EventRuntimeRetrying) {
			got = append(got, *ev.Retry)
		}
		return got
	}

	t.Run("a turn its bound ended", func(t *testing.T) {
		h := session(t, rate)
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		res := <-h.turnAsync(ctx, "#wait-cancel")
		require.Equal(t, domain.KindTurnTimeout, res.Err.Kind)
		require.NotNil(t, res.Failure)
		assert.Equal(t, domain.FailureRateLimited, res.Failure.Class, res.Failure.Evidence)
		assert.Equal(t, 429, res.Failure.ProviderStatus)
		assert.True(t, res.Retryable())
		assert.Equal(t, []domain.RuntimeRetry{rate}, retrying(h))
	})
	t.Run("a rate limit given up on in a spent window", func(t *testing.T) {
		h := session(t, rate, window)
		res := h.turn("#failure-rate-limit")
		require.NotNil(t, res.Failure)
		assert.Equal(t, domain.FailureQuotaExhausted, res.Failure.Class, res.Failure.Evidence)
		assert.True(t, res.Retryable())
		assert.Equal(t, 32*time.Minute, res.Failure.RetryAfter)
		assert.Equal(t, []domain.RuntimeRetry{rate, window}, retrying(h))
	})
	t.Run("the wire's signal first", func(t *testing.T) {
		h := session(t, window)
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		res := <-h.turnAsync(ctx, "#failure-retrying")
		require.NotNil(t, res.Failure)
		assert.Equal(t, domain.FailureRateLimited, res.Failure.Class, res.Failure.Evidence)
		got := retrying(h)
		require.Len(t, got, 1, "the journal is not read when the wire said it")
		assert.Contains(t, got[0].Evidence, "Retrying Claude")
	})
	t.Run("while the turn runs", func(t *testing.T) {
		h := session(t, rate)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := h.turnAsync(ctx, "#wait-cancel")
		require.Eventually(t, func() bool { return len(retrying(h)) == 1 }, waitFor, 10*time.Millisecond,
			"the record is an event before the turn ends")
		select {
		case res := <-done:
			t.Fatalf("the turn ended first: %s", res.Message())
		default:
		}
		cancel()
		res := <-done
		assert.Equal(t, domain.KindTurnCancelled, res.Err.Kind)
		assert.Equal(t, []domain.RuntimeRetry{rate}, retrying(h), "each record once")
	})
}
