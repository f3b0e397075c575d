package app

import (
	"slices"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
)

// msgToolLeftOpen is the tool_result message of a call the runtime left
// open when its turn ended.
const msgToolLeftOpen = "tool call was still open when the turn ended"

// toolRecord tracks one tool call from its first update to its terminal one.
type toolRecord struct {
	kind  domain.ToolKind
	title string
	began time.Time
}

// onToolCall records tool_call and tool_call_update, and emits one
// tool_result per completed or failed call.
func (s *Session) onToolCall(variant string, tc *acpwire.ToolCall, now time.Time) {
	s.mu.Lock()
	rec, seen := s.tools[tc.ToolCallID]
	if !seen {
		// A terminal update with no tool_call before it starts the record.
		rec = &toolRecord{kind: domain.ToolOther, began: now}
		s.tools[tc.ToolCallID] = rec
	}
	if tc.Kind != nil {
		rec.kind = domain.NormalizeToolKind(*tc.Kind)
	}
	title := ""
	if tc.Title != nil {
		title = *tc.Title
		rec.title = title
	}
	terminal := variant == acpwire.UpdateToolCallUpdate && tc.Status != nil &&
		(*tc.Status == acpwire.ToolStatusCompleted || *tc.Status == acpwire.ToolStatusFailed)
	if terminal {
		delete(s.tools, tc.ToolCallID)
	}
	s.mu.Unlock()
	if !terminal {
		return
	}
	s.emitOther(domain.Event{
		Type:           domain.EventToolResult,
		Time:           now,
		ToolName:       string(rec.kind),
		ToolDurationMS: now.Sub(rec.began).Milliseconds(),
		ToolError:      *tc.Status == acpwire.ToolStatusFailed,
		Message:        domain.TruncateRunes(title, domain.MessageCap),
	})
}

// closeOpenTools closes out the calls left open at the end of a turn: each
// gets a tool_result flagged as an error, since no outcome was reported.
func (s *Session) closeOpenTools() {
	now := s.opts.Clock.Now()
	s.mu.Lock()
	open := s.tools
	s.tools = make(map[string]*toolRecord)
	s.mu.Unlock()
	for _, rec := range sortedRecords(open) {
		s.emit(domain.Event{
			Type:           domain.EventToolResult,
			Time:           now,
			ToolName:       string(rec.kind),
			ToolDurationMS: now.Sub(rec.began).Milliseconds(),
			ToolError:      true,
			Message:        msgToolLeftOpen,
		})
	}
}

// sortedRecords orders records by start time so the close-out is
// deterministic.
func sortedRecords(m map[string]*toolRecord) []*toolRecord {
	out := make([]*toolRecord, 0, len(m))
	for _, r := range m {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b *toolRecord) int { return a.began.Compare(b.began) })
	return out
}
