package main

import (
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

// replacedLine is the JSON line of a retry that replaced the runtime
// (docs/behaviour.md#fleet): whether the session was resumed (its
// history kept) or runs fresh.
type replacedLine struct {
	Type string    `json:"type"`
	Time time.Time `json:"time"`
	app.Replacement
}

// replaced reports a retry that replaced the runtime: resumed or fresh,
// or a runtime that could not be started again.
func (p *printer) replaced(rep app.Replacement) {
	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.buf.flush()
	if p.json {
		if rep.Err != nil {
			_ = p.enc.Encode(struct {
				Type    string    `json:"type"`
				Time    time.Time `json:"time"`
				Message string    `json:"message"`
			}{"retry_failed", time.Now().UTC(), rep.Err.Error()})
			return
		}
		_ = p.enc.Encode(replacedLine{Type: "retry_replaced", Time: time.Now().UTC(), Replacement: rep})
		return
	}
	p.clearStatus()
	p.endLine()
	fmt.Fprintf(p.out, "── %s\n", rep.Text())
}
