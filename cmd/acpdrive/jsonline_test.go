package main

import (
	"bytes"
	"encoding/json"
	"reflect"
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
		{"chunk", domain.Event{Type: domain.EventMessageChunk, Time: at, AgentPID: 4242, Message: "x", MessageID: "m-1"}, true},
		{"no pid", domain.Event{Type: domain.EventMessageChunk, Time: at, Message: "x"}, true},
		{"no message id", domain.Event{Type: domain.EventMessageChunk, Time: at, AgentPID: 1, Message: "x y"}, true},
		{"whole second", domain.Event{Type: domain.EventMessageChunk, Time: at.Truncate(time.Second), AgentPID: 1, Message: "x"}, true},
		{"zero time", domain.Event{Type: domain.EventTurnCompleted}, true},
		{"message to escape", domain.Event{Type: domain.EventMessageChunk, Time: at, Message: "hi \"you\"\n"}, false},
		{"message not ASCII", domain.Event{Type: domain.EventMessageChunk, Time: at, Message: "é"}, false},
		{"message id to escape", domain.Event{Type: domain.EventMessageChunk, Time: at, Message: "x", MessageID: `a\b`}, false},
		{"session started", domain.Event{Type: domain.EventSessionStarted, Time: at, SessionID: "s"}, false},
		{"usage", domain.Event{Type: domain.EventTokenUsage, Time: at, Usage: usage, Model: "m"}, false},
		{"tool", domain.Event{Type: domain.EventToolResult, Time: at, ToolName: "read", ToolDurationMS: 3, ToolError: true}, false},
		{"type to escape", domain.Event{Type: domain.EventType(`a"b`), Time: at}, false},
		{"another zone", domain.Event{Type: domain.EventMessageChunk, Time: at.In(time.FixedZone("x", 3600))}, false},
		{"year out of range", domain.Event{Type: domain.EventMessageChunk, Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, false},
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
			if want := encodeEvent(t, c.ev); string(got) != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
}

// TestAppendBareEventDeclinesEveryOtherField: setting any field of
// domain.Event beyond the bare ones sends the event to encoding/json, so
// a field added later is never dropped from --json.
func TestAppendBareEventDeclinesEveryOtherField(t *testing.T) {
	bare := map[string]bool{"Type": true, "Time": true, "AgentPID": true, "Message": true, "MessageID": true}
	typ := reflect.TypeOf(domain.Event{})
	for i := range typ.NumField() {
		f := typ.Field(i)
		if bare[f.Name] {
			continue
		}
		t.Run(f.Name, func(t *testing.T) {
			ev := domain.Event{Type: domain.EventMessageChunk, Time: time.Unix(0, 0).UTC()}
			v := reflect.ValueOf(&ev).Elem().Field(i)
			switch v.Kind() {
			case reflect.String:
				v.SetString("x")
			case reflect.Int, reflect.Int64:
				v.SetInt(1)
			case reflect.Bool:
				v.SetBool(true)
			case reflect.Pointer:
				v.Set(reflect.New(f.Type.Elem()))
			case reflect.Slice:
				v.Set(reflect.MakeSlice(f.Type, 0, 0))
			default:
				t.Fatalf("field %s of kind %s: extend this test", f.Name, v.Kind())
			}
			if _, ok := appendBareEvent(nil, ev); ok {
				t.Errorf("the fast path took an event with %s set", f.Name)
			}
		})
	}
}

func encodeEvent(t *testing.T, ev domain.Event) string {
	t.Helper()
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(ev); err != nil {
		t.Fatal(err)
	}
	return want.String()
}
