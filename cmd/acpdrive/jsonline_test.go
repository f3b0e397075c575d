package main

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/acpdrive/acpdrive/domain"
)

// TestAppendBareEvent: the hand-encoded line of a bare event is exactly
// encoding/json's, and every other event is left to encoding/json.
func TestAppendBareEvent(t *testing.T) {
	at := time.Date(2026, 12, 1, 11, 30, 0, 123456789, time.UTC)
	usage := &domain.Usage{InputTokens: 1}
	cases := []struct {
		name string
		ev   domain.Event
		fast bool
	}{
		{"chunk notification", domain.Event{Type: domain.EventNotification, Time: at, AgentPID: 4242}, true},
		{"no pid", domain.Event{Type: domain.EventNotification, Time: at}, true},
		{"whole second", domain.Event{Type: domain.EventNotification, Time: at.Truncate(time.Second), AgentPID: 1}, true},
		{"zero time", domain.Event{Type: domain.EventNotification}, true},
		{"with a message", domain.Event{Type: domain.EventNotification, Time: at, Message: "hi <b>"}, false},
		{"session started", domain.Event{Type: domain.EventSessionStarted, Time: at, SessionID: "s"}, false},
		{"usage", domain.Event{Type: domain.EventTokenUsage, Time: at, Usage: usage, Model: "m"}, false},
		{"tool", domain.Event{Type: domain.EventToolResult, Time: at, ToolName: "read", ToolDurationMS: 3, ToolError: true}, false},
		{"type to escape", domain.Event{Type: domain.EventType(`a"b`), Time: at}, false},
		{"another zone", domain.Event{Type: domain.EventNotification, Time: at.In(time.FixedZone("x", 3600))}, false},
		{"year out of range", domain.Event{Type: domain.EventNotification, Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := appendBareEvent(nil, c.ev)
			if ok != c.fast {
				t.Fatalf("fast path %v, want %v", ok, c.fast)
			}
			if !ok {
				return
			}
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(c.ev); err != nil {
				t.Fatal(err)
			}
			if string(got) != want.String() {
				t.Errorf("got  %s\nwant %s", got, want.String())
			}
		})
	}
}
