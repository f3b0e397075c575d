// Package eventrec records what a session reports, for tests: the app
// tests and the interop suite hand a Recorder's Add to app.Options.OnEvent
// and assert on what it saw, mostly through Shape, and give the session's
// logger a Log to write to.
package eventrec

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/acpdrive/acpdrive/domain"
)

// Recorder collects events in the order they arrive, and the text of
// agent messages. It is safe for concurrent use; the zero value is ready.
type Recorder struct {
	// Normalize, when set, rewrites every event message Shape renders
	// (a test replaces its own temporary paths, say).
	Normalize func(string) string

	mu     sync.Mutex
	events []domain.Event
	texts  []string
	hooks  []func(domain.Event)
}

// Add records ev, then calls the hooks registered with On; it fits
// app.Options.OnEvent.
func (r *Recorder) Add(ev domain.Event) {
	r.mu.Lock()
	r.events = append(r.events, ev)
	hooks := slices.Clone(r.hooks)
	r.mu.Unlock()
	for _, h := range hooks {
		h(ev)
	}
}

// AddText records the text of an agent message chunk; it fits
// app.Options.OnAgentText.
func (r *Recorder) AddText(_, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.texts = append(r.texts, text)
}

// On registers a hook called with every later event, on the goroutine
// that calls Add (a session's reader).
func (r *Recorder) On(h func(domain.Event)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hooks = append(r.hooks, h)
}

// All returns a copy of the events recorded so far.
func (r *Recorder) All() []domain.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// Text returns the agent text recorded so far, joined.
func (r *Recorder) Text() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.texts, "")
}

// Reset forgets the events and text recorded so far (between turns of one
// session); the hooks stay.
func (r *Recorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events, r.texts = nil, nil
}

// OfType returns the events recorded so far of type t, in order.
func (r *Recorder) OfType(t domain.EventType) []domain.Event {
	var out []domain.Event
	for _, ev := range r.All() {
		if ev.Type == t {
			out = append(out, ev)
		}
	}
	return out
}

// Shape renders the events recorded so far as Shape does, with the
// Recorder's Normalize.
func (r *Recorder) Shape() []string { return Shape(r.All(), r.Normalize) }

// Shape renders events as "type" or "type:message", tool results as
// "tool_result:<tool name>:<ok|error>:<message>", and collapses each run
// of message_chunk events (one per streamed chunk) into a single
// "message_chunk*". Messages pass through normalize when it is not nil.
// It never returns nil.
func Shape(events []domain.Event, normalize func(string) string) []string {
	if normalize == nil {
		normalize = func(s string) string { return s }
	}
	out := []string{}
	for _, ev := range events {
		var s string
		switch {
		case ev.Type == domain.EventToolResult:
			status := "ok"
			if ev.ToolError {
				status = "error"
			}
			s = fmt.Sprintf("tool_result:%s:%s:%s", ev.ToolName, status, normalize(ev.Message))
		case ev.Type == domain.EventMessageChunk:
			s = "message_chunk*"
			if len(out) > 0 && out[len(out)-1] == s {
				continue
			}
		case ev.Message != "":
			s = string(ev.Type) + ":" + normalize(ev.Message)
		default:
			s = string(ev.Type)
		}
		out = append(out, s)
	}
	return out
}

// Log is a concurrency-safe in-memory sink for a session's logs (an
// slog handler's writer, say). The zero value is ready.
type Log struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p to the log.
func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// String returns everything written so far.
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
