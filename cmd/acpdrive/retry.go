package main

import (
	"context"
	"fmt"
	"time"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
)

// retryLine is the JSON line printed before each wait of run --retries
// (docs/behaviour.md#retrying).
type retryLine struct {
	Type        string          `json:"type"`
	Time        time.Time       `json:"time"`
	Attempt     int             `json:"attempt"`
	MaxRetries  int             `json:"max_retries"`
	WaitMS      int64           `json:"wait_ms"`
	FromRuntime bool            `json:"from_runtime,omitempty"`
	Resume      bool            `json:"resume,omitempty"`
	ErrorKind   string          `json:"error_kind,omitempty"`
	Failure     *domain.Failure `json:"failure,omitempty"`
}

// promptTurn runs one prompt: through r when retries are set (r not nil),
// else once. The last prompt of a run or a batch task asks for the
// structured result whatever agent.output_schema_turns says
// (Session.TurnWithResult); the others as it says
// (docs/behaviour.md#structured-results).
func promptTurn(ctx context.Context, sess *app.Session, prompt string, last bool, r *app.Retrier) (domain.TurnResult, *app.Session, error) {
	if r == nil {
		if last {
			return sess.TurnWithResult(ctx, prompt), sess, nil
		}
		return sess.Turn(ctx, prompt), sess, nil
	}
	if last {
		return r.TurnWithResult(ctx, sess, prompt)
	}
	return r.Turn(ctx, sess, prompt)
}

// retryingTurn runs one prompt of run, sent again after a retryable
// failure up to agent.max_retries times (app.Retrier); it returns the last
// result and the session it ran on (a resumed one when the process was
// gone).
func retryingTurn(ctx context.Context, sess *app.Session, prompt string, last bool, cfg domain.Config, opts app.Options, out *printer, onSession func(*app.Session)) (domain.TurnResult, *app.Session) {
	var r *app.Retrier
	if cfg.MaxRetries > 0 {
		r = &app.Retrier{
			Policy:    app.RetryPolicy{MaxRetries: cfg.MaxRetries, MaxBackoff: cfg.MaxRetryBackoff},
			Options:   opts,
			OnWait:    func(w app.Retry) { out.retryWait(w, cfg.MaxRetries) },
			OnSession: onSession,
		}
	}
	res, next, err := promptTurn(ctx, sess, prompt, last, r)
	if err != nil {
		out.retryFailed(err)
	}
	return res, next
}

// retryWait prints one wait of run --retries.
func (p *printer) retryWait(w app.Retry, max int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.buf.flush()
	if p.json {
		line := retryLine{Type: "retry_wait", Time: time.Now().UTC(), Attempt: w.Attempt, MaxRetries: max,
			WaitMS: w.Wait.Milliseconds(), FromRuntime: w.FromRuntime, Resume: w.Resume, Failure: w.Result.Failure}
		if w.Result.Err != nil {
			line.ErrorKind = string(w.Result.Err.Kind)
		}
		_ = p.enc.Encode(line)
		return
	}
	p.clearStatus()
	p.endLine()
	why := w.Result.Message()
	if f := w.Result.Failure; f != nil && f.Class != domain.FailureUnknown {
		why = f.Text()
	}
	source := "back-off"
	if w.FromRuntime {
		source = "the runtime's retry-after"
	}
	resume := ""
	if w.Resume {
		resume = ", resuming the session on a new process"
	}
	fmt.Fprintf(p.out, "── retry %d of %d in %s (%s%s): %s\n", w.Attempt, max, w.Wait, source, resume, why)
}

// retryFailed reports a resume that could not start.
func (p *printer) retryFailed(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.buf.flush()
	if p.json {
		_ = p.enc.Encode(struct {
			Type    string    `json:"type"`
			Time    time.Time `json:"time"`
			Message string    `json:"message"`
		}{"retry_failed", time.Now().UTC(), err.Error()})
		return
	}
	p.clearStatus()
	p.endLine()
	fmt.Fprintf(p.out, "── the retry could not resume the session: %v\n", err)
}
