package app

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/eventrec"
	"github.com/acpdrive/acpdrive/internal/testsupport/fakeclock"
)

var streamEpoch = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// recordingStream is an eventStream with a recording sink and a fake
// clock, fed raw session/update params without any process.
type recordingStream struct {
	*eventStream
	clock    *fakeclock.Clock
	logs     *eventrec.Log
	mu       sync.Mutex
	events   []domain.Event
	activity int
}

func newRecordingStream(t *testing.T) *recordingStream {
	t.Helper()
	r := &recordingStream{clock: fakeclock.New(streamEpoch), logs: &eventrec.Log{}}
	log := slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	r.eventStream = newEventStream(r.clock, log, func(ev domain.Event) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.events = append(r.events, ev)
	}, nil, func() int { return 99 })
	r.eventStream.activity = func(time.Time) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.activity++
	}
	r.adopt("s-1")
	return r
}

func (r *recordingStream) all() []domain.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]domain.Event(nil), r.events...)
}

func (r *recordingStream) shape() []string { return eventrec.Shape(r.all(), nil) }

func (r *recordingStream) ofType(typ domain.EventType) []domain.Event {
	var out []domain.Event
	for _, ev := range r.all() {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

// send feeds one update for session s-1 (the update object as JSON).
func (r *recordingStream) send(update string) { r.sendFor("s-1", update) }

func (r *recordingStream) sendFor(session, update string) {
	r.update(json.RawMessage(`{"sessionId":"` + session + `","update":` + update + `}`))
}

func chunk(messageID, text string) string {
	raw, _ := json.Marshal(map[string]any{
		"sessionUpdate": "agent_message_chunk", "messageId": messageID,
		"content": map[string]string{"type": "text", "text": text},
	})
	return string(raw)
}

func toolUpdate(kind, id, status, title string) string {
	m := map[string]any{"sessionUpdate": kind, "toolCallId": id}
	if status != "" {
		m["status"] = status
	}
	if title != "" {
		m["title"] = title
	}
	raw, _ := json.Marshal(m)
	return string(raw)
}

func TestStreamAccumulatesChunks(t *testing.T) {
	t.Parallel()
	s := newRecordingStream(t)
	s.send(chunk("m-1", "Hel"))
	s.send(chunk("m-1", "lo"))
	assert.Equal(t, []string{"message_chunk*"}, s.shape(), "one message_chunk per chunk, no message yet")
	require.Len(t, s.all(), 2)
	assert.Equal(t, "Hel", s.all()[0].Message, "a chunk event carries the chunk's text")
	assert.Equal(t, "m-1", s.all()[0].MessageID)
	s.send(`{"sessionUpdate":"usage_update","used":1,"size":2}`)
	assert.Len(t, s.all(), 3, "a session-state update does not end the message")
	s.clock.Advance(time.Second)
	s.send(chunk("m-2", "World"))
	assert.Equal(t, []string{"message_chunk*", "context_usage:1 of 2 context tokens (50.0%)", "notification:Hello", "message_chunk*"}, s.shape())
	hello := s.all()[3]
	assert.Equal(t, streamEpoch, hello.Time, "dated at its last chunk")
	assert.Equal(t, 99, hello.AgentPID)
	assert.Equal(t, "Hello", s.last().Text)
	s.flush()
	assert.Equal(t, "notification:World", s.shape()[len(s.shape())-1])
	assert.Equal(t, "World", s.last().Text)
	s.flush()
	assert.Len(t, s.all(), 6, "a flushed message is reported once")
	assert.GreaterOrEqual(t, s.activity, 3, "every chunk is activity")
}

func TestStreamCapsAMessageAt500Runes(t *testing.T) {
	t.Parallel()
	s := newRecordingStream(t)
	for range 700 {
		s.send(chunk("m-1", "é"))
	}
	s.flush()
	msgs := s.ofType(domain.EventNotification)
	got := msgs[len(msgs)-1].Message
	assert.Equal(t, domain.MessageCap, utf8.RuneCountInString(got))
	assert.True(t, strings.HasSuffix(got, "…"))
	assert.Equal(t, strings.Repeat("é", domain.MessageCap-1)+"…", got)
	assert.Equal(t, got, s.last().Text)
	// A message of exactly the cap is not cut.
	s.send(chunk("m-2", strings.Repeat("a", domain.MessageCap)))
	s.flush()
	assert.Equal(t, strings.Repeat("a", domain.MessageCap), s.last().Text)
}

func TestStreamDropsForeignSessions(t *testing.T) {
	t.Parallel()
	s := newRecordingStream(t)
	s.sendFor("s-2", chunk("m-1", "not ours"))
	s.sendFor("s-2", toolUpdate("tool_call", "c1", "completed", "not ours"))
	s.sendFor("s-2", `{"sessionUpdate":"no_such_kind"}`)
	s.flush()
	assert.Empty(t, s.all())
	assert.Contains(t, s.logs.String(), "dropped an update for another session")
	assert.Contains(t, s.logs.String(), "session_id=s-2")
}

func TestStreamAcceptsAnySessionBeforeItsIDIsKnown(t *testing.T) {
	t.Parallel()
	s := newRecordingStream(t)
	s.idKnown, s.sessionID = false, ""
	s.sendFor("whatever", chunk("m-1", "early"))
	s.flush()
	assert.Equal(t, []string{"message_chunk*", "notification:early"}, s.shape())
}

func TestStreamToolCallBornCompletedIsOneResult(t *testing.T) {
	t.Parallel()
	s := newRecordingStream(t)
	s.send(`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Read a.txt","kind":"READ ","status":"completed"}`)
	results := s.ofType(domain.EventToolResult)
	require.Len(t, results, 1)
	assert.Equal(t, "read", results[0].ToolName)
	assert.Equal(t, int64(0), results[0].ToolDurationMS)
	assert.False(t, results[0].ToolError)
	assert.Equal(t, "Read a.txt", results[0].Message)
	// The record is closed: a later update for the id opens a new one.
	s.send(toolUpdate("tool_call_update", "c1", "in_progress", ""))
	assert.Len(t, s.ofType(domain.EventToolResult), 1)
	assert.Contains(t, s.tools, "c1")
}

func TestStreamToolCallUpdateFailedIsAToolError(t *testing.T) {
	t.Parallel()
	s := newRecordingStream(t)
	s.send(chunk("m-1", "Running it."))
	s.send(`{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Run make","kind":"execute","status":"pending"}`)
	s.send(toolUpdate("tool_call_update", "c1", "in_progress", ""))
	assert.Empty(t, s.ofType(domain.EventToolResult))
	s.clock.Advance(1500 * time.Millisecond)
	s.send(toolUpdate("tool_call_update", "c1", "failed", "make: exit status 2"))
	assert.Equal(t, []string{"message_chunk*", "notification:Running it.", "tool_result:execute:error:make: exit status 2"}, s.shape(),
		"the tool result ends the accumulated message first")
	res := s.ofType(domain.EventToolResult)[0]
	assert.True(t, res.ToolError)
	assert.Equal(t, int64(1500), res.ToolDurationMS)
	assert.Empty(t, s.tools)
}

func TestStreamNeverTerminalCallProducesNoResult(t *testing.T) {
	t.Parallel()
	s := newRecordingStream(t)
	s.send(`{"sessionUpdate":"tool_call","toolCallId":"c2","title":"Search","kind":"search","status":"pending"}`)
	s.send(toolUpdate("tool_call_update", "c1", "in_progress", "")) // unseen id: opens a record
	s.send(toolUpdate("tool_call_update", "c2", "in_progress", ""))
	require.Len(t, s.tools, 2)
	s.endTurn()
	assert.Empty(t, s.all())
	assert.Empty(t, s.tools)
	logs := s.logs.String()
	assert.Contains(t, logs, "tool call was still open when the turn ended")
	assert.Less(t, strings.Index(logs, "tool_call_id=c1"), strings.Index(logs, "tool_call_id=c2"), "logged in id order")
}

// TestStreamKeepsNoTitle checks the memory bound on titles: an open call
// keeps no title at all (only the terminal update's own title is ever
// reported), and a huge terminal title is reported cut to the cap.
func TestStreamKeepsNoTitle(t *testing.T) {
	t.Parallel()
	s := newRecordingStream(t)
	huge := strings.Repeat("t", 9<<20)
	s.send(`{"sessionUpdate":"tool_call","toolCallId":"big","status":"pending","title":"` + huge + `"}`)
	require.NotNil(t, s.tools["big"])
	s.send(toolUpdate("tool_call_update", "big", "completed", ""))
	res := s.ofType(domain.EventToolResult)
	require.Len(t, res, 1)
	assert.Equal(t, domain.MessageCap, utf8.RuneCountInString(res[0].Message), "the title the call carried, cut")
	assert.Equal(t, res[0].Message, res[0].ToolTitle)

	s.send(toolUpdate("tool_call", "big2", "pending", "short"))
	s.send(`{"sessionUpdate":"tool_call_update","toolCallId":"big2","status":"failed","title":"` + huge + `"}`)
	res = s.ofType(domain.EventToolResult)
	require.Len(t, res, 2)
	assert.Equal(t, domain.MessageCap, utf8.RuneCountInString(res[1].Message))
	assert.True(t, strings.HasSuffix(res[1].Message, "…"))
	assert.True(t, res[1].ToolError)
}

func TestStreamUnknownVariantIsMalformed(t *testing.T) {
	t.Parallel()
	s := newRecordingStream(t)
	s.send(chunk("m-1", "before"))
	s.send(`{"sessionUpdate":"state_update","stopReason":"end_turn"}`)
	s.update(json.RawMessage(`{"sessionId":"s-1","update":42}`))
	s.send(`{"sessionUpdate":"agent_message_chunk","content":{"type":"image","data":"AAAA","mimeType":"image/png"}}`)
	s.send(`{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hm"}}`)
	s.send(`{"sessionUpdate":"plan","entries":[]}`)
	s.send(`{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"x"}}`)
	assert.Equal(t, []string{
		"message_chunk*",
		"notification:before",
		"malformed:" + domain.MsgUnknownUpdate,
		"malformed:" + domain.MsgUnknownUpdate,
		"malformed:" + domain.MsgNonTextChunk,
		"other_message:" + domain.MsgReasoningBlock,
		"other_message:" + domain.MsgPlanUpdate,
	}, s.shape())
}

func TestStreamUserChunkEndsTheMessage(t *testing.T) {
	t.Parallel()
	s := newRecordingStream(t)
	s.send(chunk("m-1", "answer"))
	s.send(`{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"next question"}}`)
	assert.Equal(t, []string{"message_chunk*", "notification:answer"}, s.shape())
}

func TestStreamBoundsOpenToolCalls(t *testing.T) {
	t.Parallel()
	s := newRecordingStream(t)
	for i := range maxOpenTools + 10 {
		s.clock.Advance(time.Millisecond)
		s.send(toolUpdate("tool_call", fmt.Sprintf("c%d", i), "pending", ""))
	}
	assert.Len(t, s.tools, maxOpenTools)
	assert.NotContains(t, s.tools, "c0", "the oldest is forgotten first")
	assert.Contains(t, s.tools, fmt.Sprintf("c%d", maxOpenTools+9))
}

// TestStreamSessionStateEvents: each session-state update is one event
// with its content, and one with nothing to report is none.
func TestStreamSessionStateEvents(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		update string
		want   []string
	}{
		{"title", `{"sessionUpdate":"session_info_update","title":"Fix the build"}`, []string{"session_info:Fix the build"}},
		{"time only", `{"sessionUpdate":"session_info_update","updatedAt":"2026-12-01T00:00:00Z"}`, []string{"session_info"}},
		{"title cleared, nothing else", `{"sessionUpdate":"session_info_update","title":null}`, []string{}},
		{"empty info", `{"sessionUpdate":"session_info_update"}`, []string{}},
		{"mode", `{"sessionUpdate":"current_mode_update","currentModeId":"plan"}`, []string{"mode_changed:plan"}},
		{"mode without id", `{"sessionUpdate":"current_mode_update","currentModeId":""}`, []string{}},
		{"no commands", `{"sessionUpdate":"available_commands_update","availableCommands":[]}`, []string{"commands_available:no commands"}},
		{"boolean option", `{"sessionUpdate":"config_option_update","configOptions":[{"id":"fast","name":"Fast","type":"boolean","currentValue":true}]}`, []string{"config_options:fast=true"}},
		{"no options", `{"sessionUpdate":"config_option_update","configOptions":[]}`, []string{"config_options:no options"}},
		{"usage without cost", `{"sessionUpdate":"usage_update","used":1794,"size":258400}`, []string{"context_usage:1794 of 258400 context tokens (0.7%)"}},
		{"usage of no window", `{"sessionUpdate":"usage_update","used":0,"size":0}`, []string{"context_usage:0 of 0 context tokens"}},
		{"notice with description", `{"sessionUpdate":"notice","severity":"error","title":"MCP down","description":"server x exited"}`, []string{"runtime_notice:MCP down: server x exited"}},
		{"empty notice", `{"sessionUpdate":"notice","severity":"info","title":""}`, []string{}},
		{"empty text chunk", `{"sessionUpdate":"agent_message_chunk","messageId":"m-0","content":{"type":"text","text":""}}`, []string{}},
		{"empty informational chunk", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":""},"_meta":{"claudeCode":{"kind":"informational"}}}`, []string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := newRecordingStream(t)
			s.send(c.update)
			assert.Equal(t, c.want, s.shape())
			assert.Equal(t, 1, s.activity, "every update is activity")
		})
	}
}

// TestStreamAuthStatus: _auth/status_update is a runtime notice; one that
// does not decode is none.
func TestStreamAuthStatus(t *testing.T) {
	t.Parallel()
	cases := []struct {
		params string
		want   []string
	}{
		{`{"authStatus":{"kind":"api_key","label":"Anthropic API key","detail":"ANTHROPIC_API_KEY"}}`, []string{"runtime_notice:authentication: Anthropic API key (api_key, ANTHROPIC_API_KEY)"}},
		{`{"authStatus":{"kind":"oauth"}}`, []string{"runtime_notice:authentication: oauth"}},
		{`{"authStatus":{}}`, []string{}},
		{`{}`, []string{}},
		{`[1]`, []string{}},
	}
	for _, c := range cases {
		s := newRecordingStream(t)
		s.authStatus(json.RawMessage(c.params))
		assert.Equal(t, c.want, s.shape(), c.params)
	}
}
