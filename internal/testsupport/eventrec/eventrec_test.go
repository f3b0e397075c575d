package eventrec_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/eventrec"
)

func ev(t domain.EventType, msg string) domain.Event {
	return domain.Event{Type: t, Message: msg}
}

func TestShape(t *testing.T) {
	upper := strings.ToUpper
	for _, tc := range []struct {
		name      string
		events    []domain.Event
		normalize func(string) string
		want      []string
	}{
		{"no events", nil, nil, []string{}},
		{"type alone", []domain.Event{ev(domain.EventTurnCompleted, "")}, nil, []string{"turn_completed"}},
		{"type and message", []domain.Event{ev(domain.EventSessionStarted, "session started")}, nil,
			[]string{"session_started:session started"}},
		{"message chunks collapse",
			[]domain.Event{
				ev(domain.EventMessageChunk, "hel"), ev(domain.EventMessageChunk, "lo"),
				ev(domain.EventNotification, "hello"),
				ev(domain.EventMessageChunk, "a"), ev(domain.EventMessageChunk, "b"),
			}, nil,
			[]string{"message_chunk*", "notification:hello", "message_chunk*"}},
		{"tool results",
			[]domain.Event{
				{Type: domain.EventToolResult, ToolName: "read"},
				{Type: domain.EventToolResult, ToolName: "edit", ToolError: true, Message: "still open"},
			}, nil,
			[]string{"tool_result:read:ok:", "tool_result:edit:error:still open"}},
		{"normalize rewrites messages",
			[]domain.Event{
				ev(domain.EventNotification, "in /tmp/ws"),
				{Type: domain.EventToolResult, ToolName: "read", Message: "/tmp/ws/a"},
				ev(domain.EventTurnCompleted, ""),
			}, upper,
			[]string{"notification:IN /TMP/WS", "tool_result:read:ok:/TMP/WS/A", "turn_completed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, eventrec.Shape(tc.events, tc.normalize))
			r := &eventrec.Recorder{Normalize: tc.normalize}
			for _, e := range tc.events {
				r.Add(e)
			}
			assert.Equal(t, tc.want, r.Shape())
		})
	}
}

func TestRecorder(t *testing.T) {
	var r eventrec.Recorder
	var hooked []domain.EventType
	r.On(func(e domain.Event) { hooked = append(hooked, e.Type) })
	r.Add(ev(domain.EventSessionStarted, "session started"))
	r.Add(ev(domain.EventNotification, "a"))
	r.AddText("m1", "hel")
	r.AddText("m1", "lo")
	r.Add(ev(domain.EventNotification, "b"))

	all := r.All()
	assert.Len(t, all, 3)
	all[0].Message = "changed"
	assert.Equal(t, "session started", r.All()[0].Message, "All returns a copy")
	assert.Equal(t, []domain.Event{ev(domain.EventNotification, "a"), ev(domain.EventNotification, "b")},
		r.OfType(domain.EventNotification))
	assert.Empty(t, r.OfType(domain.EventToolResult))
	assert.Equal(t, "hello", r.Text())
	assert.Equal(t, []domain.EventType{domain.EventSessionStarted, domain.EventNotification, domain.EventNotification}, hooked)

	r.Reset()
	assert.Empty(t, r.All())
	assert.Empty(t, r.Text())
	assert.Equal(t, []string{}, r.Shape())
	r.Add(ev(domain.EventTurnCompleted, ""))
	assert.Equal(t, []string{"turn_completed"}, r.Shape())
	assert.Len(t, hooked, 4, "hooks survive Reset")
}

func TestRecorderConcurrent(t *testing.T) {
	var r eventrec.Recorder
	concurrently(8, 100, func() {
		r.Add(ev(domain.EventMessageChunk, "x"))
		r.AddText("", "x")
		_ = r.Shape()
	})
	assert.Len(t, r.All(), 800)
	assert.Len(t, r.Text(), 800)
	assert.Equal(t, []string{"message_chunk*"}, r.Shape())
}

func TestLog(t *testing.T) {
	var l eventrec.Log
	assert.Empty(t, l.String())
	concurrently(4, 50, func() {
		_, err := l.Write([]byte("line\n"))
		assert.NoError(t, err)
		_ = l.String()
	})
	assert.Equal(t, strings.Repeat("line\n", 200), l.String())
}

// concurrently runs f times times on each of n goroutines and waits.
func concurrently(n, times int, f func()) {
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range times {
				f()
			}
		}()
	}
	wg.Wait()
}
