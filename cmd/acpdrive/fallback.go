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

// fallbackRecorder keeps the reason of a continuation's fallback from the
// session's own log record, whatever level the person asked logs at.
type fallbackRecorder struct {
	mu     sync.Mutex
	reason string
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
