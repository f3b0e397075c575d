package domain_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/acpdrive/acpdrive/domain"
)

func i64(n int64) *int64 { return &n }

func TestWireUsage(t *testing.T) {
	cases := []struct {
		name      string
		in        domain.WireUsage
		want      domain.Usage
		wireTotal int64
		ok        bool
	}{
		{"claude", domain.WireUsage{InputTokens: i64(1733), OutputTokens: i64(61), CachedReadTokens: i64(1009), CachedWriteTokens: i64(211), TotalTokens: i64(3014)},
			domain.Usage{InputTokens: 1733, OutputTokens: 61, CacheReadTokens: 1009, CacheWriteTokens: 211, TotalTokens: 3014}, 3014, true},
		{"codex: reasoning inside output", domain.WireUsage{InputTokens: i64(724), OutputTokens: i64(61), CachedReadTokens: i64(1009), CachedWriteTokens: i64(0), ThoughtTokens: i64(29), TotalTokens: i64(1794)},
			domain.Usage{InputTokens: 724, OutputTokens: 61, CacheReadTokens: 1009, ReasoningTokens: 29, TotalTokens: 1794}, 1794, true},
		{"a wrong total: the sum wins", domain.WireUsage{InputTokens: i64(10), OutputTokens: i64(5), TotalTokens: i64(99)},
			domain.Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15}, 99, true},
		{"copilot: input includes cache, as its total shows", domain.WireUsage{InputTokens: i64(120), OutputTokens: i64(12), CachedReadTokens: i64(40), CachedWriteTokens: i64(0), ThoughtTokens: i64(0), TotalTokens: i64(132)},
			domain.Usage{InputTokens: 80, OutputTokens: 12, CacheReadTokens: 40, TotalTokens: 132}, 132, true},
		{"no total", domain.WireUsage{InputTokens: i64(10), OutputTokens: i64(5)}, domain.Usage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15}, 0, true},
		{"no output", domain.WireUsage{InputTokens: i64(10), TotalTokens: i64(10)}, domain.Usage{}, 0, false},
		{"no input", domain.WireUsage{OutputTokens: i64(10)}, domain.Usage{}, 0, false},
		{"negative", domain.WireUsage{InputTokens: i64(-1), OutputTokens: i64(10)}, domain.Usage{}, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u, total, ok := c.in.Usage()
			assert.Equal(t, c.ok, ok)
			assert.Equal(t, c.want, u)
			assert.Equal(t, c.wireTotal, total)
		})
	}
}

func TestUsageMeaningNormalize(t *testing.T) {
	raw := domain.Usage{InputTokens: 1733, OutputTokens: 61, CacheReadTokens: 1009, ReasoningTokens: 29, TotalTokens: 1794}
	cases := []struct {
		name string
		m    domain.UsageMeaning
		want domain.Usage
	}{
		{"already the one meaning", domain.UsageMeaning{}, domain.Usage{InputTokens: 1733, OutputTokens: 61, CacheReadTokens: 1009, ReasoningTokens: 29, TotalTokens: 2803}},
		{"codex rollout: input includes cache", domain.UsageMeaning{InputIncludesCache: true},
			domain.Usage{InputTokens: 724, OutputTokens: 61, CacheReadTokens: 1009, ReasoningTokens: 29, TotalTokens: 1794}},
		{"gemini: output without thoughts", domain.UsageMeaning{InputIncludesCache: true, OutputExcludesReasoning: true},
			domain.Usage{InputTokens: 724, OutputTokens: 90, CacheReadTokens: 1009, ReasoningTokens: 29, TotalTokens: 1823}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { assert.Equal(t, c.want, c.m.Normalize(raw)) })
	}
	assert.Equal(t, int64(0), domain.UsageMeaning{InputIncludesCache: true}.Normalize(domain.Usage{InputTokens: 1, CacheReadTokens: 5}).InputTokens, "never below zero")
}

func TestTurnCost(t *testing.T) {
	usd := func(a float64) *domain.Cost { return &domain.Cost{Amount: a, Currency: "USD"} }
	cases := []struct {
		name        string
		before, end *domain.Cost
		want        domain.Cost
		ok          bool
	}{
		{"first value: from zero", nil, usd(0.25), *usd(0.25), true},
		{"the difference", usd(0.25), usd(0.75), *usd(0.5), true},
		{"no value at the end", usd(0.25), nil, domain.Cost{}, false},
		{"another currency", usd(0.25), &domain.Cost{Amount: 1, Currency: "EUR"}, domain.Cost{}, false},
		{"a cumulative that fell", usd(0.75), usd(0.25), *usd(0), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := domain.TurnCost(c.before, c.end)
			assert.Equal(t, c.ok, ok)
			assert.Equal(t, c.want, got)
		})
	}
}

func TestCostAndContextBudgets(t *testing.T) {
	cb := domain.CostBudget{Max: 1}
	assert.True(t, cb.Unbounded())
	cb.Add(domain.TurnResult{Cost: &domain.Cost{Amount: 0.75, Currency: "USD"}})
	cb.Add(domain.TurnResult{Cost: &domain.Cost{Amount: 0.75, Currency: "EUR"}})
	cb.Add(domain.TurnResult{})
	assert.False(t, cb.Reached(), "never summed across currencies")
	assert.Equal(t, []domain.Cost{{Amount: 0.75, Currency: "USD"}, {Amount: 0.75, Currency: "EUR"}}, cb.Spent)
	cb.Add(domain.TurnResult{Cost: &domain.Cost{Amount: 0.25, Currency: "USD"}})
	assert.True(t, cb.Reached())
	assert.False(t, cb.Unbounded())
	assert.False(t, (domain.CostBudget{}).Reached())

	xb := domain.ContextBudget{Max: 0.5}
	assert.True(t, xb.Unbounded())
	xb.Add(domain.TurnResult{Context: &domain.ContextUsage{Used: 499, Size: 1000}})
	assert.False(t, xb.Reached())
	xb.Add(domain.TurnResult{Context: &domain.ContextUsage{Used: 1, Size: 0}})
	assert.False(t, xb.Reached(), "a window of no size is not counted")
	xb.Add(domain.TurnResult{Context: &domain.ContextUsage{Used: 500, Size: 1000}})
	assert.True(t, xb.Reached())
	assert.Equal(t, "3,014 / 1,000,000", domain.ContextText(domain.ContextUsage{Used: 3014, Size: 1000000}))
	assert.Equal(t, "0 / 999", domain.ContextText(domain.ContextUsage{Size: 999}))
	assert.Equal(t, "0.0100 USD", domain.CostText(domain.Cost{Amount: 0.0100088, Currency: "USD"}))
}

func TestRunningTotal(t *testing.T) {
	d, ok := domain.Usage{InputTokens: 310, OutputTokens: 30, CacheReadTokens: 120, ReasoningTokens: 7}.Sub(
		domain.Usage{InputTokens: 160, OutputTokens: 21, CacheReadTokens: 70, ReasoningTokens: 6})
	assert.True(t, ok)
	assert.Equal(t, domain.Usage{InputTokens: 150, OutputTokens: 9, CacheReadTokens: 50, ReasoningTokens: 1, TotalTokens: 209}, d)
	_, ok = domain.Usage{InputTokens: 1}.Sub(domain.Usage{InputTokens: 2})
	assert.False(t, ok, "a counter that fell is no running total")
}
