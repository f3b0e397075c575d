package app_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/refagent"
)

// wireClaude is the usage the reference agent's "#usage-wire" reports by
// default (the Claude adapter's), in the one meaning.
var wireClaude = domain.Usage{InputTokens: 1733, OutputTokens: 61, CacheReadTokens: 1009, CacheWriteTokens: 211, TotalTokens: 3014}

// TestWireUsageFirstInLine: a turn whose prompt result carries usage is
// measured from it even where a journal source answers too; the journal's
// figure is cross-checked (a debug line with both; a Warn past the
// tolerance) and lends its model; a turn without usage on the wire is
// measured by the journal, which names itself.
func TestWireUsageFirstInLine(t *testing.T) {
	agreeing := wireClaude
	agreeing.InputTokens += 10 // within 5 % of 3014
	agreeing.TotalTokens += 10
	far := wireClaude
	far.InputTokens += 1000
	far.TotalTokens += 1000
	journal := domain.Usage{InputTokens: 5, OutputTokens: 2, TotalTokens: 7}
	ref := &fakeSource{name: "ref_journal", runtime: refagent.AgentName, claimWord: "acpdrive-reference-agent",
		usage: []domain.Usage{agreeing, far, journal}}
	h, _ := measuredSession(t, "", ref)

	res := h.sess.Turn(context.Background(), "#usage-wire")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	require.NotNil(t, res.Usage)
	assert.Equal(t, wireClaude, *res.Usage)
	assert.Equal(t, domain.SourcePromptResult, res.Source)
	assert.Equal(t, "fake-model-1", res.Model, "the journal lends its model")
	assert.Contains(t, h.logs.String(), "turn measured by the protocol and by a journal")
	assert.NotContains(t, h.logs.String(), "disagrees with the protocol's")

	res = h.sess.Turn(context.Background(), "#usage-wire")
	require.NotNil(t, res.Usage)
	assert.Equal(t, wireClaude, *res.Usage, "the protocol's figure is kept")
	assert.Contains(t, h.logs.String(), "level=WARN msg=\"the journal's figure for the turn disagrees with the protocol's beyond the tolerance; the protocol's is kept\"")

	res = h.sess.Turn(context.Background(), "hello")
	require.NotNil(t, res.Usage)
	assert.Equal(t, journal, *res.Usage)
	assert.Equal(t, "ref_journal", res.Source)

	var sources []string
	for _, ev := range h.rec.OfType(domain.EventTokenUsage) {
		sources = append(sources, ev.Source)
	}
	assert.Equal(t, []string{domain.SourcePromptResult, domain.SourcePromptResult, "ref_journal"}, sources)
}

// TestWireUsageRaisesTokenCounts: with no journal source, a turn measured
// from the protocol makes token counts the protocol's; a turn without
// usage stays unmeasured and lowers nothing.
func TestWireUsageRaisesTokenCounts(t *testing.T) {
	h, _ := measuredSession(t, "")
	require.Equal(t, domain.CapGap, h.sess.Capabilities().State(domain.CapTokenCounts))
	res := h.sess.Turn(context.Background(), "hello")
	assert.Nil(t, res.Usage)
	assert.Equal(t, domain.CapGap, h.sess.Capabilities().State(domain.CapTokenCounts))
	res = h.sess.Turn(context.Background(), "#usage-wire")
	require.NotNil(t, res.Usage)
	assert.Equal(t, domain.CapProtocol, h.sess.Capabilities().State(domain.CapTokenCounts))
}

// TestWireUsageBreakdown: per-model figures in the result's
// _meta.quota.model_usage are a breakdown beside the turn's figure, which
// they never change.
func TestWireUsageBreakdown(t *testing.T) {
	h, _ := measuredSession(t, "")
	meta := `{"quota":{"token_count":{"inputTokens":1733},"model_usage":[` +
		`{"model":"claude-sonnet","token_count":{"totalTokens":3014,"inputTokens":1733,"cachedInputTokens":1009,"cachedWriteTokens":211,"outputTokens":61,"reasoningOutputTokens":0}},` +
		`{"model":"claude-haiku","token_count":{"totalTokens":120,"inputTokens":100,"cachedInputTokens":0,"cachedWriteTokens":0,"outputTokens":20,"reasoningOutputTokens":0}}]}}`
	res := h.sess.Turn(context.Background(), `#usage-wire {"meta":`+meta+`}`)
	require.NotNil(t, res.Usage)
	assert.Equal(t, wireClaude, *res.Usage, "the breakdown does not change the turn's figure")
	assert.Equal(t, []domain.ModelUsage{
		{Model: "claude-sonnet", Usage: wireClaude},
		{Model: "claude-haiku", Usage: domain.Usage{InputTokens: 100, OutputTokens: 20, TotalTokens: 120}},
	}, res.Breakdown)
}

// TestWireUsageContextAndCost: the turn's context use and cost come from
// the usage_update it carried; the remote launch (no journal source can
// claim it) is measured from the protocol all the same.
func TestWireUsageContextAndCost(t *testing.T) {
	h, _ := measuredSession(t, "build-1", &fakeSource{name: "never", runtime: refagent.AgentName, claimWord: "acpdrive-reference-agent"})
	res := h.sess.Turn(context.Background(), `#usage-wire {"used":3014,"size":1000000,"cost":{"amount":0.5,"currency":"USD"}}`)
	require.NotNil(t, res.Usage)
	assert.Equal(t, domain.SourcePromptResult, res.Source)
	assert.Equal(t, &domain.Cost{Amount: 0.5, Currency: "USD"}, res.Cost)
	require.NotNil(t, res.Context)
	assert.Equal(t, uint64(3014), res.Context.Used)
	res = h.sess.Turn(context.Background(), `#usage-wire {"used":4000,"size":1000000,"cost":{"amount":0.75,"currency":"USD"}}`)
	assert.Equal(t, &domain.Cost{Amount: 0.25, Currency: "USD"}, res.Cost)
	res = h.sess.Turn(context.Background(), `#usage-wire {"used":5000,"size":1000000,"cost":{"amount":1,"currency":"EUR"}}`)
	assert.Nil(t, res.Cost, "a change of currency reports no cost")
	assert.True(t, strings.Contains(h.logs.String(), "the session's cost changed currency"))
}

// TestWireUsageRunningTotal: a runtime that reports the session's running
// total in each prompt result (Copilot CLI, by its agentInfo.name) has each
// turn measured as the difference from the previous one, its cached input
// taken out of the input as its total shows.
func TestWireUsageRunningTotal(t *testing.T) {
	// The fact is the runtime's (the table of runtime facts): the session
	// is given no measurement source.
	h := start(t, script(t, "running-total.json"), func(o *app.Options) { o.MeasurementSources = nil })
	res := h.sess.Turn(context.Background(), "#first")
	require.NotNil(t, res.Usage)
	assert.Equal(t, domain.Usage{InputTokens: 70, OutputTokens: 10, CacheReadTokens: 30, TotalTokens: 110}, *res.Usage)
	res = h.sess.Turn(context.Background(), "#second")
	require.NotNil(t, res.Usage)
	assert.Equal(t, domain.Usage{InputTokens: 110, OutputTokens: 15, CacheReadTokens: 40, TotalTokens: 165}, *res.Usage, "the second turn's own figures")
}
