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
	// resumes the session on a new process.
	Resume bool
	// Result is the failed turn being retried.
	Result domain.TurnResult
}

// Retrier retries a failed turn an orchestrator asked for
// (docs/behaviour.md#retrying): on the same session, resumed on a new
// process (Options.ResumeSessionID) when the runtime's process is gone;
// after the failure's retry_after when the runtime exposed one, else the
// exponential back-off capped by MaxBackoff; never a turn whose failure is
// not retryable (quota, credentials, context overflow, a cancellation);
// within a budget of attempts and of total wait.
type Retrier struct {
	// Policy bounds the retries.
	Policy RetryPolicy
	// Options start the resumed session when the process is gone; its
	// ResumeSessionID is set to the failed session's id.
	Options Options
	// Clock measures the waits; nil uses Options.Clock, and the system
	// clock when that is nil too.
	Clock ports.Clock
	// OnWait, when set, is told of each wait before it begins.
	OnWait func(Retry)
	// OnSession, when set, is told of a session resumed in place of the
	// failed one, before its turn: from then on it is the session to
	// cancel or stop.
	OnSession func(*Session)
}

// Turn runs prompt on sess (Session.Turn) and retries it while it fails
// retryably and the budgets allow. It returns the last result and the
// session it ran on: sess, or the session resumed in its place (sess is
// then stopped; the caller stops the one returned). err is set only when a
// resume could not start; the result is then the failure that asked for
// it. ctx ending during a wait returns the last result at once.
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
	for attempt := 1; attempt <= r.Policy.MaxRetries; attempt++ {
		if res.Outcome == domain.OutcomeCompleted || !res.Retryable() || ctx.Err() != nil {
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
			next, err := r.resume(ctx, sess)
			if err != nil {
				return res, sess, err
			}
			sess = next
			if r.OnSession != nil {
				r.OnSession(sess)
			}
		}
		res = turn(sess)
	}
	return res, sess, nil
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

// resume stops sess and starts its session again on a new process.
func (r Retrier) resume(ctx context.Context, sess *Session) (*Session, error) {
	id := sess.ID()
	if err := sess.Stop(ctx); err != nil {
		sess.log.Debug("the failed session's stop before its resume", "error", err)
	}
	opts := r.Options
	opts.ResumeSessionID, opts.ForkSessionID = id, ""
	next, err := Start(ctx, opts)
	if err != nil {
		return nil, err
	}
	if c, ok := next.Continuation(); ok && !c.Continued {
		// Never silently: the retry runs without the turns before it
		// (docs/behaviour.md#retrying).
		msg := MsgRetryFreshSession + c.Reason
		next.log.Warn("the retry could not resume the session; it runs on a new one", "session_id", id, "reason", c.Reason)
		next.stream.emit(domain.Event{Type: domain.EventNotification, Message: msg, Origin: domain.OriginAcpdrive})
	}
	return next, nil
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
