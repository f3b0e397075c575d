package domain_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/acpdrive/acpdrive/domain"
)

func TestEventTypeStrings(t *testing.T) {
	tests := []struct {
		got  domain.EventType
		want string
	}{
		{domain.EventSessionStarted, "session_started"},
		{domain.EventStartupFailed, "startup_failed"},
		{domain.EventTurnCompleted, "turn_completed"},
		{domain.EventTurnFailed, "turn_failed"},
		{domain.EventTurnCancelled, "turn_cancelled"},
		{domain.EventTurnEndedWithError, "turn_ended_with_error"},
		{domain.EventTurnInputRequired, "turn_input_required"},
		{domain.EventTokenUsage, "token_usage"},
		{domain.EventNotification, "notification"},
		{domain.EventOtherMessage, "other_message"},
		{domain.EventMalformed, "malformed"},
		{domain.EventToolResult, "tool_result"},
	}
	for _, tt := range tests {
		if string(tt.got) != tt.want {
			t.Errorf("event type %q, want %q", tt.got, tt.want)
		}
	}
}

func TestEventMessageConstants(t *testing.T) {
	tests := []struct{ got, want string }{
		{domain.MsgSessionStarted, "session started"},
		{domain.MsgReasoningBlock, "reasoning block"},
		{domain.MsgPlanUpdate, "plan update"},
		{domain.MsgNonTextChunk, "agent sent a message chunk this client does not render"},
		{domain.MsgUnknownUpdate, "received a session update of an unrecognized kind"},
		{domain.MsgUnparseableLine, "received a line that could not be parsed as JSON-RPC"},
		{domain.MsgUnimplementedMethod, "the agent called a method this client does not implement"},
		{domain.MsgPermissionRefused, "refused a permission request because this run is unattended and no one can approve it"},
		{domain.MsgPermissionUngrantable, "the agent needs a permission this unattended run cannot grant"},
		{domain.MsgElicitation, "the agent asked for something only a person could give, and this unattended run has no one to give it: an answer to a question"},
		{domain.MsgToolServersGated, "this session delivered tool servers and the agent runtime asked for consent before running a tool; an unattended run grants no consent, so any delivered tool the runtime gates the same way cannot be called unless that runtime's own configuration allows it"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("constant = %q, want %q", tt.got, tt.want)
		}
	}
	if domain.MessageCap != 500 {
		t.Errorf("MessageCap = %d, want 500", domain.MessageCap)
	}
}

func TestEventJSON(t *testing.T) {
	at := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	tests := []struct {
		name string
		ev   domain.Event
		want string
	}{
		{
			name: "minimal omits empty fields",
			ev:   domain.Event{Type: domain.EventNotification, Time: at},
			want: `{"type":"notification","time":"2025-03-04T05:06:07Z"}`,
		},
		{
			name: "session started",
			ev: domain.Event{Type: domain.EventSessionStarted, Time: at, AgentPID: 42,
				Message: domain.MsgSessionStarted, SessionID: "s-1"},
			want: `{"type":"session_started","time":"2025-03-04T05:06:07Z","agent_pid":42,"message":"session started","session_id":"s-1"}`,
		},
		{
			name: "token usage",
			ev: domain.Event{Type: domain.EventTokenUsage, Time: at, Model: "m",
				Usage: &domain.Usage{InputTokens: 1, OutputTokens: 2, TotalTokens: 3}},
			want: `{"type":"token_usage","time":"2025-03-04T05:06:07Z","usage":{"input_tokens":1,"output_tokens":2,"cache_read_tokens":0,"cache_write_tokens":0,"reasoning_tokens":0,"tool_use_tokens":0,"total_tokens":3},"model":"m"}`,
		},
		{
			name: "tool result",
			ev: domain.Event{Type: domain.EventToolResult, Time: at, ToolName: "execute",
				ToolDurationMS: 1500, ToolError: true, Message: "Run tests"},
			want: `{"type":"tool_result","time":"2025-03-04T05:06:07Z","message":"Run tests","tool_name":"execute","tool_duration_ms":1500,"tool_error":true}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.ev)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Errorf("json = %s\nwant   %s", b, tt.want)
			}
		})
	}
}

func TestTruncateRunes(t *testing.T) {
	ascii500 := strings.Repeat("a", 500)
	ascii501 := strings.Repeat("a", 501)
	multi500 := strings.Repeat("é", 250) + strings.Repeat("日", 249) + "🙂"
	multi501 := multi500 + "x"
	tests := []struct {
		name string
		s    string
		n    int
		want string
	}{
		{"empty", "", 500, ""},
		{"short", "hello", 500, "hello"},
		{"exactly cap ascii", ascii500, 500, ascii500},
		{"cap plus one ascii", ascii501, 500, strings.Repeat("a", 499) + "…"},
		{"exactly cap multibyte", multi500, 500, multi500},
		{"cap plus one multibyte", multi501, 500, strings.Repeat("é", 250) + strings.Repeat("日", 249) + "…"},
		{"n one", "abc", 1, "…"},
		{"n zero", "abc", 0, ""},
		{"n negative", "abc", -1, ""},
		{"n two", "日本語", 2, "日…"},
		{"multibyte bytes over n but runes not", "日本語", 3, "日本語"},
		{"invalid utf8 counts per byte", "a\xffb\xfe", 3, "a\xff…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := domain.TruncateRunes(tt.s, tt.n)
			if got != tt.want {
				t.Errorf("TruncateRunes(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
			}
			if tt.n > 0 && utf8.RuneCountInString(got) > tt.n {
				t.Errorf("result has %d runes, over %d", utf8.RuneCountInString(got), tt.n)
			}
		})
	}
}
