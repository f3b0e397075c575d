package main

import (
	"strconv"
	"time"

	"github.com/acpdrive/acpdrive/domain"
)

// appendBareEvent appends the --json line of an event that carries only
// its type, time, agent PID, message and message id (the message_chunk
// every text chunk produces, the bulk of a stream) exactly as
// encoding/json would encode it, and reports true; for any other event,
// or strings that need escaping, it reports false and the caller encodes
// it with encoding/json.
func appendBareEvent(b []byte, ev domain.Event) ([]byte, bool) {
	if !onlyBareFields(ev) || !plainJSONString(string(ev.Type)) || !plainJSONString(ev.Message) || !plainJSONString(ev.MessageID) {
		return b, false
	}
	if y := ev.Time.Year(); y < 0 || y > 9999 || ev.Time.Location() != time.UTC {
		return b, false // encoding/json refuses these years; other zones take the slow path
	}
	b = append(b, `{"type":"`...)
	b = append(b, ev.Type...)
	b = append(b, `","time":"`...)
	b = ev.Time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	if ev.AgentPID != 0 {
		b = append(b, `,"agent_pid":`...)
		b = strconv.AppendInt(b, int64(ev.AgentPID), 10)
	}
	if ev.Message != "" {
		b = append(b, `,"message":"`...)
		b = append(b, ev.Message...)
		b = append(b, '"')
	}
	if ev.MessageID != "" {
		b = append(b, `,"message_id":"`...)
		b = append(b, ev.MessageID...)
		b = append(b, '"')
	}
	return append(b, '}', '\n'), true
}

// onlyBareFields reports whether every field of ev but type, time, agent
// PID, message and message id is zero (TestAppendBareEvent checks that
// this list covers every field of domain.Event).
func onlyBareFields(ev domain.Event) bool {
	return ev.SessionID == "" && ev.SessionRef == "" && ev.Usage == nil && ev.Model == "" && ev.Source == "" && ev.Cost == nil && ev.Breakdown == nil && ev.ToolName == "" &&
		ev.ToolDurationMS == 0 && !ev.ToolError && ev.ToolCallID == "" && ev.ToolTitle == "" && ev.ToolStatus == "" &&
		ev.Notice == nil && ev.Commands == nil && ev.ModeID == "" && ev.ConfigOptions == nil && ev.Title == "" &&
		ev.UpdatedAt == "" && ev.Context == nil && ev.Plan == nil &&
		ev.ParentSessionID == "" && ev.Child == nil && ev.Origin == "" && ev.Outcome == "" && ev.Permission == nil &&
		ev.Retry == nil && ev.Thought == "" && ev.Elicitation == nil
}

// plainJSONString reports whether s encodes as itself between quotes:
// printable ASCII without '"' or '\\' (encoding/json's HTML escaping is
// off in the printer).
func plainJSONString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
