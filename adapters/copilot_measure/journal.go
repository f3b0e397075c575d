package copilot_measure

import (
	"encoding/json"

	"github.com/acpdrive/acpdrive/domain"
)

// record is one line of events.jsonl, as far as the source reads it.
type record struct {
	Type string `json:"type"`
	Data struct {
		Usage        *usageRecord      `json:"usage"`
		ToolRequests []json.RawMessage `json:"toolRequests"`
	} `json:"data"`
}

// usageRecord is a session.usage_record's usage; a nil counter was
// absent.
type usageRecord struct {
	Model      string `json:"model"`
	Input      *int64 `json:"inputTokens"`
	Output     *int64 `json:"outputTokens"`
	CacheRead  *int64 `json:"cacheReadTokens"`
	CacheWrite *int64 `json:"cacheWriteTokens"`
	Reasoning  *int64 `json:"reasoningTokens"`
}

const (
	typeUserMessage      = "user.message"
	typeUsageRecord      = "session.usage_record"
	typeAssistantMessage = "assistant.message"
	typeTurnEnd          = "assistant.turn_end"
)

// kind is what a journal line means to the source.
type kind int

const (
	kindOther kind = iota
	kindTurnStart
	kindCall
	kindIncompleteCall
	kindFinalReply
	kindRoundEnd
)

// classify decodes one line: its kind, and for a complete call its
// figures and model.
func classify(line []byte) (kind, domain.Usage, string) {
	var r record
	if json.Unmarshal(line, &r) != nil {
		return kindOther, domain.Usage{}, ""
	}
	switch r.Type {
	case typeUserMessage:
		return kindTurnStart, domain.Usage{}, ""
	case typeAssistantMessage:
		if len(r.Data.ToolRequests) == 0 {
			return kindFinalReply, domain.Usage{}, ""
		}
	case typeTurnEnd:
		return kindRoundEnd, domain.Usage{}, ""
	case typeUsageRecord:
		u := r.Data.Usage
		if u == nil || u.Input == nil || u.Output == nil || u.CacheRead == nil || u.CacheWrite == nil || u.Reasoning == nil {
			return kindIncompleteCall, domain.Usage{}, ""
		}
		return kindCall, domain.Usage{
			InputTokens:      *u.Input,
			OutputTokens:     *u.Output,
			CacheReadTokens:  *u.CacheRead,
			CacheWriteTokens: *u.CacheWrite,
			ReasoningTokens:  *u.Reasoning,
			TotalTokens:      *u.Input + *u.Output,
		}, u.Model
	}
	return kindOther, domain.Usage{}, ""
}
