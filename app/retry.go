package app

import (
	"context"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// RetryPolicy bounds Retrier (docs/behaviour.md#retrying): how many times
// a failed turn is sent again, the back-off's cap and the total wait.
type RetryPolicy struct {
	// MaxRetries is the number of retries after the first attempt
	// (agent.max_retries, run --retries); zero or negative: none.
	MaxRetries int
	// MaxBackoff caps the exponential back-off (agent.max_retry_backoff_ms;
	// domain.RetryBackoff); zero or negative leaves it uncapped.
	MaxBackoff time.Duration
	// MaxWait bounds the sum of the waits; a wait that would pass it is
	// not taken and the last result is returned. Zero or negative: no
	// bound but the attempts'.
	MaxWait time.Duration
}

// Retry is one wait of a Retrier, as OnWait is told it.
type Retry struct {
	// Attempt is the number of the retry about to be made, from 1.
	Attempt int
	// Wait is how long the Retrier waits before it.
	Wait time.Duration
	// FromRuntime reports that Wait is the retry_after the runtime
	// exposed rather than the back-off.
	FromRuntime bool
	// Resume reports that the runtime's process was gone: the retry
	// starts the runtime again under the same session, resuming it when
	// the runtime can (Replacement says whether it did).
	Resume bool
	// Result is the failed turn being retried.
	Result domain.TurnResult
}

// Retrier retries a failed turn an orchestrator asked for
// (docs/behaviour.md#retrying, #fleet): on the same session; when the
// runtime's process is gone, with the runtime started again under the
// same *Session value (through the Host that placed it, or on a process
// of its own), the session resumed when the runtime can and run fresh
// when not, which OnReplace and a session_replaced event say; after the
// failure's retry_after when the runtime exposed one, else the
// exponential back-off capped by MaxBackoff; never a turn whose failure is
// not retryable (quota, credentials, context overflow, a cancellation);
// within a budget of attempts and of total wait.
//
// A turn that failed because the shared process its session was on ended
// (another session's turn may have ended it) is sent once more on a
// process of the session's own, whatever the budget: only a session whose
// own turn ends its process again reports the failure
// (docs/behaviour.md#fleet). The zero Retrier retries nothing else.
type Retrier struct {
	// Policy bounds the retries.
	Policy RetryPolicy
	// Options, when its Launcher is set, start the runtime again in place
	// of the session's own options when the process is gone; its
	// ResumeSessionID is set to the failed session's id.
	Options Options
	// Clock measures the waits; nil uses Options.Clock, and the system
	// clock when that is nil too.
	Clock ports.Clock
	// OnWait, when set, is told of each wait before it begins.
	OnWait func(Retry)
	// OnReplace, when set, is told of each replacement of the runtime,
	// before the turn is sent again.
	OnReplace func(Replacement)
	// OnSession, when set, is told of the session whose runtime was
	// replaced, before its turn. It is always the session the Retrier was
	// given: the field remains for callers written when a resume returned
	// another session.
	OnSession func(*Session)
}

// Turn runs prompt on sess (Session.Turn) and retries it while it fails
// retryably and the budgets allow. It returns the last result and sess,
// the session it ran on: a replaced runtime runs under the same value, so
// the caller stops sess. err is set only when the runtime could not be
// started again; the result is then the failure that asked for it and
// sess is stopped. ctx ending during a wait returns the last result at
// once.
func (r Retrier) Turn(ctx context.Context, sess *Session, prompt string) (domain.TurnResult, *Session, error) {
	return r.retry(ctx, sess, func(s *Session) domain.TurnResult { return s.Turn(ctx, prompt) })
}

// TurnWithResult is Turn with every attempt a Session.TurnWithResult: the
// last prompt of a caller whose settings ask for the structured result of
// the last turn only (domain.ResultTurnsLast;
// docs/behaviour.md#structured-results).
func (r Retrier) TurnWithResult(ctx context.Context, sess *Session, prompt string) (domain.TurnResult, *Session, error) {
	return r.retry(ctx, sess, func(s *Session) domain.TurnResult { return s.TurnWithResult(ctx, prompt) })
}

// retry runs turn on sess and retries it as Turn says.
func (r Retrier) retry(ctx context.Context, sess *Session, turn func(*Session) domain.TurnResult) (domain.TurnResult, *Session, error) {
	clock := r.Clock
	if clock == nil {
		clock = r.Options.Clock
	}
	if clock == nil {
		clock = systemClock{}
	}
	var waited time.Duration
	res := turn(sess)
	isolated := false
	for attempt := 1; ; attempt++ {
		if res.Outcome == domain.OutcomeCompleted || ctx.Err() != nil {
			return res, sess, nil
		}
		if !isolated && sess.sharedProcessEnded(res) {
			// Not this session's failure, maybe: once more on a process of
			// its own (docs/behaviour.md#fleet).
			isolated, attempt = true, attempt-1
			if err := r.replace(ctx, sess, true, 0); err != nil {
				return res, sess, err
			}
			res = turn(sess)
			continue
		}
		if attempt > r.Policy.MaxRetries || !res.Retryable() {
			return res, sess, nil
		}
		wait, fromRuntime := retryWait(res, attempt, r.Policy.MaxBackoff)
		if r.Policy.MaxWait > 0 && waited+wait > r.Policy.MaxWait {
			return res, sess, nil
		}
		resume := sess.processGone(res)
		if r.OnWait != nil {
			r.OnWait(Retry{Attempt: attempt, Wait: wait, FromRuntime: fromRuntime, Resume: resume, Result: res})
		}
		select {
		case <-ctx.Done():
			return res, sess, nil
		case <-clock.After(wait):
		}
		waited += wait
		if resume {
			if err := r.replace(ctx, sess, false, attempt); err != nil {
				return res, sess, err
			}
		}
		res = turn(sess)
	}
}

// replace starts sess's runtime again under the same value and tells
// OnReplace and OnSession.
func (r Retrier) replace(ctx context.Context, sess *Session, isolate bool, attempt int) error {
	var with *Options
	if r.Options.Launcher != nil {
		with = &r.Options
	}
	rep, err := sess.replaceRuntime(ctx, with, isolate)
	rep.Attempt = attempt
	if r.OnReplace != nil {
		r.OnReplace(rep)
	}
	if err == nil && r.OnSession != nil {
		r.OnSession(sess)
	}
	return err
}

// retryWait is the wait before retry attempt: the failure's retry_after
// when the runtime exposed one or a usage window's reset (providerWait,
// never shortened), else the capped exponential back-off.
func retryWait(res domain.TurnResult, attempt int, maxBackoff time.Duration) (time.Duration, bool) {
	if wait, ok := providerWait(res); ok {
		return wait, true
	}
	return domain.RetryBackoff(attempt, maxBackoff), false
}

// MsgRetryFreshSession begins the notification of a retry whose session
// could not be resumed on a new process: the retry runs on a new session,
// without the earlier turns; the reason follows
// (docs/behaviour.md#retrying).
const MsgRetryFreshSession = "the session could not be resumed on a new process; the retry runs on a new session without the earlier turns: "

// processGone reports whether the runtime's process is gone after res:
// a retry then needs a new process (docs/behaviour.md#retrying).
func (s *Session) processGone(res domain.TurnResult) bool {
	return s.conn.rt.ended() || s.conn.rt.outputLost.Load() || res.Err != nil && res.Err.Kind == domain.KindPortExit
}
