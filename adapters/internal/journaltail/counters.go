package journaltail

import (
	"encoding/json"

	"github.com/acpdrive/acpdrive/domain"
)

// Counters maps the members of one record's token-usage object onto
// domain.Usage: each field names the member read into that figure, empty
// for a figure the runtime does not write (it stays zero). A record
// counts only when it carries every named member as an integer
// (docs/behaviour.md#token-accounting).
type Counters struct {
	Input, Output, CacheRead, CacheWrite, Reasoning, ToolUse, Total string
	// Model names the member holding the model, when the object has one.
	Model string
	// TotalOf, when Total is empty, derives the total from the figures
	// read (the runtime writes none).
	TotalOf func(domain.Usage) int64
	// Meaning says how the runtime's counters differ from the one meaning
	// (docs/behaviour.md#token-accounting); Usage converts them with it.
	Meaning domain.UsageMeaning
}

// Usage reads obj's counters and model, converted into the one meaning
// (input without cached input, output with reasoning, total their sum);
// ok is false when obj is not an object or lacks a named counter.
func (c Counters) Usage(obj json.RawMessage) (u domain.Usage, model string, ok bool) {
	var members map[string]json.RawMessage
	if json.Unmarshal(obj, &members) != nil || members == nil {
		return domain.Usage{}, "", false
	}
	for _, f := range []struct {
		name string
		into *int64
	}{
		{c.Input, &u.InputTokens}, {c.Output, &u.OutputTokens},
		{c.CacheRead, &u.CacheReadTokens}, {c.CacheWrite, &u.CacheWriteTokens},
		{c.Reasoning, &u.ReasoningTokens}, {c.ToolUse, &u.ToolUseTokens},
		{c.Total, &u.TotalTokens},
	} {
		if f.name == "" {
			continue
		}
		var n *int64
		if json.Unmarshal(members[f.name], &n) != nil || n == nil {
			return domain.Usage{}, "", false
		}
		*f.into = *n
	}
	if c.Total == "" && c.TotalOf != nil {
		u.TotalTokens = c.TotalOf(u)
	}
	if c.Model != "" {
		_ = json.Unmarshal(members[c.Model], &model)
	}
	return c.Meaning.Normalize(u), model, true
}
