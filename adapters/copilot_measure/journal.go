package copilot_measure

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/acpdrive/acpdrive/adapters/internal/journaltail"
	"github.com/acpdrive/acpdrive/domain"
)

// events is Copilot CLI's session-state journal under <state
// dir>/session-state (journaltail.Journal).
type events struct{ sessions string }

// Locate finds the session's events.jsonl.
func (e events) Locate(sessionID string) (string, bool) {
	p := filepath.Join(e.sessions, sessionID, "events.jsonl")
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	return p, true
}

// record is one line of events.jsonl, as far as the source reads it.
type record struct {
	Type string `json:"type"`
	Data struct {
		Usage        json.RawMessage   `json:"usage"`
		ToolRequests []json.RawMessage `json:"toolRequests"`
	} `json:"data"`
}

// Classify reads one line: a user message opens a turn, a usage record
// is a model call, and the round end after a final reply (one asking for
// no tool) ends the turn.
func (events) Classify(line []byte) journaltail.Line {
	var r record
	if json.Unmarshal(line, &r) != nil {
		return journaltail.Line{}
	}
	switch r.Type {
	case "user.message":
		return journaltail.Line{Kind: journaltail.LineTurnStart}
	case "assistant.message":
		if len(r.Data.ToolRequests) == 0 {
			return journaltail.Line{Kind: journaltail.LineFinalReply}
		}
	case "assistant.turn_end":
		return journaltail.Line{Kind: journaltail.LineRoundEnd}
	case "session.usage_record":
		counters := journaltail.Counters{
			Input: "inputTokens", Output: "outputTokens", CacheRead: "cacheReadTokens",
			CacheWrite: "cacheWriteTokens", Reasoning: "reasoningTokens", Model: "model",
			TotalOf: func(u domain.Usage) int64 { return u.InputTokens + u.OutputTokens },
			Meaning: domain.UsageMeaning{InputIncludesCache: true},
		}
		if u, model, ok := counters.Usage(r.Data.Usage); ok {
			return journaltail.Line{Kind: journaltail.LineCall, Usage: u, Model: model}
		}
		return journaltail.Line{Kind: journaltail.LineIncompleteCall}
	}
	return journaltail.Line{}
}
