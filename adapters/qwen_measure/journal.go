package qwen_measure

import (
	"encoding/json"
	"path/filepath"

	"github.com/acpdrive/acpdrive/adapters/internal/journaltail"
	"github.com/acpdrive/acpdrive/domain"
)

// chats is the chats journal of Qwen Code under its projects folder
// (journaltail.Journal).
type chats struct{ projects string }

// Locate finds the session's journal under any project folder.
func (c chats) Locate(sessionID string) (string, bool) {
	matches, err := filepath.Glob(filepath.Join(c.projects, "*", "chats", sessionID+".jsonl"))
	if err != nil || len(matches) == 0 {
		return "", false
	}
	return matches[len(matches)-1], true
}

// record is one line of the chats journal, as far as the source reads it.
type record struct {
	Type          string `json:"type"`
	Subtype       string `json:"subtype"`
	SystemPayload *struct {
		UIEvent json.RawMessage `json:"uiEvent"`
	} `json:"systemPayload"`
}

// Classify reads one line: a user record opens a turn, a checkpoint ends
// it, an api_response event is a model call.
func (chats) Classify(line []byte) journaltail.Line {
	var r record
	if json.Unmarshal(line, &r) != nil {
		return journaltail.Line{}
	}
	switch {
	case r.Type == "user":
		return journaltail.Line{Kind: journaltail.LineTurnStart}
	case r.Type != "system":
	case r.Subtype == "branch_checkpoint":
		return journaltail.Line{Kind: journaltail.LineTurnEnd}
	case r.Subtype == "ui_telemetry" && r.SystemPayload != nil:
		var e struct {
			Name string `json:"event.name"`
		}
		if json.Unmarshal(r.SystemPayload.UIEvent, &e) != nil || e.Name != "qwen-code.api_response" {
			break
		}
		counters := journaltail.Counters{
			Input: "input_token_count", Output: "output_token_count", CacheRead: "cached_content_token_count",
			Reasoning: "thoughts_token_count", Total: "total_token_count", Model: "model",
			Meaning: domain.UsageMeaning{InputIncludesCache: true},
		}
		if u, model, ok := counters.Usage(r.SystemPayload.UIEvent); ok {
			return journaltail.Line{Kind: journaltail.LineCall, Usage: u, Model: model}
		}
		return journaltail.Line{Kind: journaltail.LineIncompleteCall}
	}
	return journaltail.Line{}
}
