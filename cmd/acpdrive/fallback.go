package main

import (
	"context"
	"log/slog"
	"sync"

	"github.com/acpdrive/acpdrive/app"
)

// msgContinuationFallback is the Warn record app writes when a
// continuation is not confirmed (docs/behaviour.md#session-continuation);
// its "reason" attribute is why.
const msgContinuationFallback = "session continuation not confirmed; falling back to session/new"

// msgCancelUnanswered is the Warn record app writes when the runtime did
// not answer the prompt within read_timeout after session/cancel
// (docs/behaviour.md#turns-and-their-disposition).
const msgCancelUnanswered = "agent did not answer the prompt after session/cancel"

// fallbackRecorder keeps what a person must be told from the session's own
// log records, whatever level the person asked logs at: the reason of a
// continuation's fallback, and a cancel the runtime never acknowledged.
type fallbackRecorder struct {
	mu                sync.Mutex
	reason            string
	cancelUnanswered  bool
	cancelWaitedBound string
}

// takeCancelUnanswered reports (and forgets) that the runtime did not
// answer after a cancel, and the bound waited.
func (r *fallbackRecorder) takeCancelUnanswered() (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, ok := r.cancelWaitedBound, r.cancelUnanswered
	r.cancelUnanswered, r.cancelWaitedBound = false, ""
	return b, ok
}

func (r *fallbackRecorder) get() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reason
}

// logger wraps inner (nil: no logs) so the fallback's record is seen.
func (r *fallbackRecorder) logger(inner *slog.Logger) *slog.Logger {
	h := slog.Handler(slog.DiscardHandler)
	if inner != nil {
		h = inner.Handler()
	}
	return slog.New(recordingHandler{inner: h, rec: r})
}

// recordingHandler passes every record to inner and keeps the fallback's
// reason.
type recordingHandler struct {
	inner slog.Handler
	rec   *fallbackRecorder
}

func (h recordingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn || h.inner.Enabled(ctx, l)
}

func (h recordingHandler) Handle(ctx context.Context, rec slog.Record) error {
	if rec.Message == msgCancelUnanswered {
		h.rec.mu.Lock()
		h.rec.cancelUnanswered = true
		rec.Attrs(func(a slog.Attr) bool {
			if a.Key == "read_timeout" {
				h.rec.cancelWaitedBound = a.Value.String()
			}
			return true
		})
		h.rec.mu.Unlock()
	}
	if rec.Message == msgContinuationFallback {
		rec.Attrs(func(a slog.Attr) bool {
			if a.Key == "reason" {
				h.rec.mu.Lock()
				h.rec.reason = a.Value.String()
				h.rec.mu.Unlock()
				return false
			}
			return true
		})
	}
	if !h.inner.Enabled(ctx, rec.Level) {
		return nil
	}
	return h.inner.Handle(ctx, rec)
}

func (h recordingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return recordingHandler{inner: h.inner.WithAttrs(as), rec: h.rec}
}

func (h recordingHandler) WithGroup(name string) slog.Handler {
	return recordingHandler{inner: h.inner.WithGroup(name), rec: h.rec}
}

// resumeLine is run_result's account of a --resume
// (docs/behaviour.md#session-continuation).
type resumeLine struct {
	// Requested is the session --resume named.
	Requested string `json:"requested"`
	// Continued reports that it was the session run.
	Continued bool `json:"continued"`
	// Route is the continuation method tried ("" when the runtime
	// advertises none).
	Route string `json:"route,omitempty"`
	// Reason says why it was not continued; absent when it was.
	Reason string `json:"reason,omitempty"`
}

// resumeOutcome is what became of --resume ID once the session started;
// nil when no --resume was given.
func resumeOutcome(sess *app.Session, requested string, rec *fallbackRecorder) *resumeLine {
	if requested == "" {
		return nil
	}
	route := app.ContinuationRoute(sess.AgentInfo().Advertised)
	r := &resumeLine{Requested: requested, Route: route}
	if sess.Route() != "session/new" && sess.ID() == requested {
		r.Continued = true
		r.Route = sess.Route()
		return r
	}
	switch reason := rec.get(); {
	case route == "":
		r.Reason = "the runtime advertises neither session/load nor session/resume"
	case reason != "":
		r.Reason = reason
	default:
		r.Reason = route + " was not confirmed"
	}
	return r
}

// text is the line a person reads when the run did not continue.
func (r *resumeLine) text(newID string) string {
	return "did not continue session " + r.Requested + ": " + r.Reason + "; started a new session " + newID + " instead"
}
