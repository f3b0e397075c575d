package app_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/fakeclock"
)

// retried is what one Retrier.Turn did.
type retried struct {
	res   domain.TurnResult
	sess  *app.Session
	err   error
	waits []app.Retry
}

// retryTurn runs r.Turn on h's session with a fake clock for the waits,
// advancing it by each wait once the Retrier waits on it.
func retryTurn(t *testing.T, h *harness, r app.Retrier, prompt string) retried {
	t.Helper()
	return retryTurnWith(t, h, r, prompt, app.Retrier.Turn)
}

// retryTurnWith is retryTurn with turn (app.Retrier.Turn or
// app.Retrier.TurnWithResult).
func retryTurnWith(t *testing.T, h *harness, r app.Retrier, prompt string,
	turn func(app.Retrier, context.Context, *app.Session, string) (domain.TurnResult, *app.Session, error)) retried {
	t.Helper()
	clock := fakeclock.New(epoch)
	r.Clock = clock
	waits := make(chan app.Retry, 16)
	r.OnWait = func(w app.Retry) { waits <- w }
	done := make(chan retried, 1)
	go func() {
		res, sess, err := turn(r, context.Background(), h.sess, prompt)
		done <- retried{res: res, sess: sess, err: err}
	}()
	var seen []app.Retry
	for {
		select {
		case w := <-waits:
			seen = append(seen, w)
			ctx, cancel := context.WithTimeout(context.Background(), waitFor)
			require.NoError(t, clock.WaitForTimers(ctx, 1))
			cancel()
			clock.Advance(w.Wait)
		case out := <-done:
			out.waits = seen
			return out
		}
	}
}

// TestRetrierWaitsTheRuntimesRetryAfterThenBacksOff: a 429 whose error
// carries the runtime's retry-after waits exactly that; one without waits
// the exponential back-off (10 s, 20 s, …, capped); the third attempt
// completes (docs/behaviour.md#retrying).
func TestRetrierWaitsTheRuntimesRetryAfterThenBacksOff(t *testing.T) {
	t.Parallel()
	h := start(t, script(t, "retry-429.json"))
	out := retryTurn(t, h, app.Retrier{Policy: app.RetryPolicy{MaxRetries: 2, MaxBackoff: time.Minute}, Options: h.opts}, "go")
	require.NoError(t, out.err)
	require.Equal(t, domain.OutcomeCompleted, out.res.Outcome, out.res.Message())
	assert.Equal(t, "Done.", out.res.Reply)
	assert.Same(t, h.sess, out.sess)
	require.Len(t, out.waits, 2)
	assert.Equal(t, 17*time.Second, out.waits[0].Wait)
	assert.True(t, out.waits[0].FromRuntime)
	assert.Equal(t, domain.FailureRateLimited, out.waits[0].Result.Failure.Class)
	assert.Equal(t, 20*time.Second, out.waits[1].Wait, "the second retry's back-off")
	assert.False(t, out.waits[1].FromRuntime)
	assert.Equal(t, []int{1, 2}, []int{out.waits[0].Attempt, out.waits[1].Attempt})
	assert.Len(t, received(t, h.agentLg, "session/prompt"), 3)
}

// TestRetrierStopsAtOnceOnANonRetryableClass: an exhausted quota is not
// retried, whatever the budget.
func TestRetrierStopsAtOnceOnANonRetryableClass(t *testing.T) {
	t.Parallel()
	h := start(t, script(t, "retry-429.json"))
	out := retryTurn(t, h, app.Retrier{Policy: app.RetryPolicy{MaxRetries: 5}, Options: h.opts}, "#quota")
	require.NoError(t, out.err)
	require.Equal(t, domain.OutcomeFailed, out.res.Outcome)
	assert.Equal(t, domain.FailureQuotaExhausted, out.res.Failure.Class)
	assert.Empty(t, out.waits)
	assert.Len(t, received(t, h.agentLg, "session/prompt"), 1)
}

// TestRetrierKeepsItsBudgets: no retry when none is allowed, and no wait
// that would pass the total wait budget.
func TestRetrierKeepsItsBudgets(t *testing.T) {
	t.Parallel()
	h := start(t, script(t, "retry-429.json"))
	out := retryTurn(t, h, app.Retrier{Policy: app.RetryPolicy{MaxRetries: 3, MaxWait: 10 * time.Second}, Options: h.opts}, "go")
	assert.Equal(t, domain.FailureRateLimited, out.res.Failure.Class)
	assert.Empty(t, out.waits, "a 17 s retry-after passes a 10 s budget")

	h = start(t, script(t, "retry-429.json"))
	out = retryTurn(t, h, app.Retrier{Options: h.opts}, "go")
	assert.Equal(t, domain.OutcomeFailed, out.res.Outcome)
	assert.Empty(t, out.waits, "no retries allowed")
	assert.Len(t, received(t, h.agentLg, "session/prompt"), 1)
}

// TestRetrierResumesWhenTheProcessIsGone: a turn whose runtime exited is
// retried on the same session resumed on a new process.
func TestRetrierResumesWhenTheProcessIsGone(t *testing.T) {
	t.Parallel()
	h := start(t, script(t, "retry-429.json"))
	id := h.sess.ID()
	next, _, _, _ := agentOptions(t, script(t, "resumed-ok.json"))
	var told []*app.Session
	out := retryTurn(t, h, app.Retrier{Policy: app.RetryPolicy{MaxRetries: 1, MaxBackoff: time.Second}, Options: next,
		OnSession: func(s *app.Session) { told = append(told, s) }}, "#crash")
	require.NoError(t, out.err)
	require.Len(t, out.waits, 1)
	assert.True(t, out.waits[0].Resume)
	assert.Equal(t, domain.KindPortExit, out.waits[0].Result.Err.Kind)
	require.Equal(t, domain.OutcomeCompleted, out.res.Outcome, out.res.Message())
	assert.Equal(t, "Done after the resume.", out.res.Reply)
	require.Same(t, h.sess, out.sess, "the runtime is replaced under the same session")
	assert.Equal(t, []*app.Session{out.sess}, told, "the resumed session is told before its turn")
	assert.Equal(t, id, out.sess.ID())
	require.NoError(t, out.sess.Stop(context.Background()))
}

// TestRetrierWithoutAClock: a Retrier given no Clock, with options that
// name none either, waits on the system clock (before, its first wait
// dereferenced a nil clock).
func TestRetrierWithoutAClock(t *testing.T) {
	t.Parallel()
	h := start(t, script(t, "retry-429.json"))
	opts := h.opts
	opts.Clock = nil
	r := app.Retrier{Policy: app.RetryPolicy{MaxRetries: 2, MaxBackoff: time.Millisecond}, Options: opts}
	res, sess, err := r.Turn(context.Background(), h.sess, "go")
	require.NoError(t, err)
	assert.Same(t, h.sess, sess)
	assert.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
}

// TestRetrierSaysWhenItCouldNotResume: a retry whose runtime cannot
// resume the session runs on a new session, and says so: a notification
// on the new session before its turn, with the reason
// (docs/behaviour.md#retrying).
func TestRetrierSaysWhenItCouldNotResume(t *testing.T) {
	t.Parallel()
	h := start(t, script(t, "retry-429.json"))
	next, rec, _, _ := agentOptions(t, []string{"--scenario", "echo"})
	out := retryTurn(t, h, app.Retrier{Policy: app.RetryPolicy{MaxRetries: 1, MaxBackoff: time.Second}, Options: next}, "#crash")
	require.NoError(t, out.err)
	require.Len(t, out.waits, 1)
	assert.True(t, out.waits[0].Resume)
	require.Same(t, h.sess, out.sess, "the runtime is replaced under the same session")
	defer func() { assert.NoError(t, out.sess.Stop(context.Background())) }()
	c, ok := out.sess.Continuation()
	require.True(t, ok)
	assert.False(t, c.Continued)
	var told []domain.Event
	for _, ev := range rec.OfType(domain.EventNotification) {
		if strings.HasPrefix(ev.Message, app.MsgRetryFreshSession) {
			told = append(told, ev)
		}
	}
	require.Len(t, told, 1, "the fresh session is said once")
	assert.Equal(t, app.MsgRetryFreshSession+c.Reason, told[0].Message)
	assert.Equal(t, domain.OriginAcpdrive, told[0].Origin)
	replaced := rec.OfType(domain.EventSessionReplaced)
	require.Len(t, replaced, 1, "the replacement is an event")
	assert.True(t, strings.HasPrefix(replaced[0].Message, app.MsgSessionFresh), replaced[0].Message)
}
