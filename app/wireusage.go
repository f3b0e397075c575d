package app

import (
	"encoding/json"
	"log/slog"

	"github.com/acpdrive/acpdrive/domain"
)

// wireFigure is what the protocol carried about one turn's spend: the
// figure in the one meaning and the source that carried it
// (docs/behaviour.md#token-accounting).
type wireFigure struct {
	usage  domain.Usage
	source string // domain.SourcePromptResult or domain.SourceStateUpdate
}

// ingestWireUsage is the single entry point of the protocol as a
// measurement source (docs/behaviour.md#token-accounting): a prompter hands
// it the decoded usage value that ended a turn — ACP v1's session/prompt
// result (source domain.SourcePromptResult), ACP v2's ending state_update
// (domain.SourceStateUpdate) — and gets the turn's figure, or nil when the
// value measures nothing (absent, null, or without the counters that
// define a figure). A runtime total that disagrees with the sum of its
// counters is logged; the sum is the figure.
func ingestWireUsage(w *domain.WireUsage, source string, log *slog.Logger) *wireFigure {
	if w == nil {
		return nil
	}
	u, wireTotal, ok := w.Usage()
	if !ok {
		log.Debug("turn usage on the wire lacks a counter that defines a figure; not measured from it", "source", source)
		return nil
	}
	if wireTotal != 0 && wireTotal != u.TotalTokens {
		log.Debug("turn usage on the wire: the runtime's total is not the sum of its counters; the sum is kept",
			"source", source, "runtime_total", wireTotal, "sum", u.TotalTokens)
	}
	return &wireFigure{usage: u, source: source}
}

// quotaMeta is the part of a prompt result's _meta that carries per-model
// figures (quota.model_usage, as the Claude adapter and codex-acp 2.x
// attach it).
type quotaMeta struct {
	Quota *struct {
		ModelUsage []struct {
			Model      string `json:"model"`
			TokenCount struct {
				InputTokens           int64 `json:"inputTokens"`
				CachedInputTokens     int64 `json:"cachedInputTokens"`
				CachedWriteTokens     int64 `json:"cachedWriteTokens"`
				CacheWriteInputTokens int64 `json:"cacheWriteInputTokens"` // codex-acp's name
				OutputTokens          int64 `json:"outputTokens"`
				ReasoningOutputTokens int64 `json:"reasoningOutputTokens"`
			} `json:"token_count"`
		} `json:"model_usage"`
	} `json:"quota"`
}

// modelBreakdown reads the per-model figures of a result's _meta, nil when
// it carries none. The rows include side calls (the session title,
// subagents, compaction), so they can total more than the turn's figure
// and never replace it.
func modelBreakdown(meta json.RawMessage) []domain.ModelUsage {
	if len(meta) == 0 {
		return nil
	}
	var q quotaMeta
	if json.Unmarshal(meta, &q) != nil || q.Quota == nil || len(q.Quota.ModelUsage) == 0 {
		return nil
	}
	out := make([]domain.ModelUsage, 0, len(q.Quota.ModelUsage))
	for _, r := range q.Quota.ModelUsage {
		tc := r.TokenCount
		u := domain.Usage{InputTokens: tc.InputTokens, CacheReadTokens: tc.CachedInputTokens,
			CacheWriteTokens: tc.CachedWriteTokens + tc.CacheWriteInputTokens, OutputTokens: tc.OutputTokens, ReasoningTokens: tc.ReasoningOutputTokens}
		u.TotalTokens = u.Sum()
		out = append(out, domain.ModelUsage{Model: r.Model, Usage: u})
	}
	return out
}
