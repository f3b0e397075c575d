package domain

// Where a turn's figures came from (Usage.Source, the token_usage event's
// source; docs/behaviour.md#token-accounting). A journal source names
// itself (its ports.MeasurementSource name).
const (
	// SourcePromptResult: the usage object of ACP v1's session/prompt
	// result.
	SourcePromptResult = "acp_prompt_result"
	// SourceStateUpdate: the usage object of ACP v2's state_update that
	// ends the turn (idle).
	SourceStateUpdate = "acp_state_update"
)

// WireUsage is the usage object a turn's end carries on the ACP wire
// (docs/behaviour.md#token-accounting): the session/prompt result's
// "usage", or ACP v2's ending state_update's. A counter the runtime left
// out is nil. inputTokens excludes cached input; totalTokens is the sum
// of the counters (reasoning is part of outputTokens).
type WireUsage struct {
	InputTokens       *int64 `json:"inputTokens"`
	OutputTokens      *int64 `json:"outputTokens"`
	CachedReadTokens  *int64 `json:"cachedReadTokens"`
	CachedWriteTokens *int64 `json:"cachedWriteTokens"`
	ThoughtTokens     *int64 `json:"thoughtTokens"`
	TotalTokens       *int64 `json:"totalTokens"`
}

// Usage returns the figure in the one meaning of every counter. A runtime
// whose totalTokens is inputTokens + outputTokens while it reports cached
// tokens counts them inside inputTokens (OpenAI's meaning): they are taken
// out of the input. ok is false when a counter that defines a figure (input,
// output) is missing or a counter is negative: such a usage measures
// nothing. Total is always the sum (Usage.Sum); wireTotal is the
// runtime's own totalTokens (0 when it sent none), for a cross-check.
func (w WireUsage) Usage() (u Usage, wireTotal int64, ok bool) {
	if w.InputTokens == nil || w.OutputTokens == nil {
		return Usage{}, 0, false
	}
	val := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	}
	u = Usage{
		InputTokens: val(w.InputTokens), OutputTokens: val(w.OutputTokens),
		CacheReadTokens: val(w.CachedReadTokens), CacheWriteTokens: val(w.CachedWriteTokens),
		ReasoningTokens: val(w.ThoughtTokens),
	}
	if u.InputTokens < 0 || u.OutputTokens < 0 || u.CacheReadTokens < 0 || u.CacheWriteTokens < 0 ||
		u.ReasoningTokens < 0 || val(w.TotalTokens) < 0 {
		return Usage{}, 0, false
	}
	cached := u.CacheReadTokens + u.CacheWriteTokens
	if total := val(w.TotalTokens); cached > 0 && total != u.Sum() && total == u.InputTokens+u.OutputTokens && u.InputTokens >= cached {
		// The runtime's total says its input counts the cached tokens
		// (OpenAI's meaning, Copilot CLI's prompt result): take them out.
		u.InputTokens -= cached
	}
	u.TotalTokens = u.Sum()
	return u, val(w.TotalTokens), true
}

// Sub returns the figure-by-figure difference u − v and whether no
// figure went below zero (v is an earlier running total of u).
func (u Usage) Sub(v Usage) (Usage, bool) {
	d := Usage{
		InputTokens: u.InputTokens - v.InputTokens, OutputTokens: u.OutputTokens - v.OutputTokens,
		CacheReadTokens: u.CacheReadTokens - v.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens - v.CacheWriteTokens,
		ReasoningTokens: u.ReasoningTokens - v.ReasoningTokens, ToolUseTokens: u.ToolUseTokens - v.ToolUseTokens,
	}
	d.TotalTokens = d.Sum()
	ok := d.InputTokens >= 0 && d.OutputTokens >= 0 && d.CacheReadTokens >= 0 && d.CacheWriteTokens >= 0 &&
		d.ReasoningTokens >= 0 && d.ToolUseTokens >= 0
	return d, ok
}

// Sum is the total of the one meaning: input (cached input excluded) +
// cache read + cache write + output (reasoning included) + tool use.
func (u Usage) Sum() int64 {
	return u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens + u.OutputTokens + u.ToolUseTokens
}

// UsageMeaning says how a journal's raw counters differ from the one
// meaning (docs/behaviour.md#token-accounting), so the source converts
// them with Normalize.
type UsageMeaning struct {
	// InputIncludesCache: the raw input counts the cached reads and writes
	// too (OpenAI's and Gemini's prompt tokens).
	InputIncludesCache bool
	// OutputExcludesReasoning: the raw output leaves the reasoning tokens
	// out (Gemini's candidates).
	OutputExcludesReasoning bool
}

// Normalize converts raw figures into the one meaning: input without the
// cached reads and writes, output with the reasoning, total their sum.
// The other counters are kept.
func (m UsageMeaning) Normalize(raw Usage) Usage {
	u := raw
	if m.InputIncludesCache {
		u.InputTokens = max(0, u.InputTokens-u.CacheReadTokens-u.CacheWriteTokens)
	}
	if m.OutputExcludesReasoning {
		u.OutputTokens += u.ReasoningTokens
	}
	u.TotalTokens = u.Sum()
	return u
}

// ModelUsage is one model's share of a turn as a runtime attaches it
// beside the turn's figure (Claude's _meta.quota.model_usage): side calls
// such as the session title included, so it is a breakdown and never the
// turn's figure.
type ModelUsage struct {
	Model string `json:"model"`
	Usage
}

// TurnCost is a turn's cost from the session's cumulative cost
// (usage_update.cost): the difference between the last value before the
// turn and the value at its end, in the runtime's currency. before is nil
// when no value came before the turn (the session starts at zero). ok is
// false when there is no value at the end, or the currency changed (a
// cost is never computed across currencies).
func TurnCost(before, end *Cost) (Cost, bool) {
	if end == nil {
		return Cost{}, false
	}
	if before == nil {
		return *end, true
	}
	if before.Currency != end.Currency {
		return Cost{}, false
	}
	return Cost{Amount: max(0, end.Amount-before.Amount), Currency: end.Currency}, true
}
