package domain_test

import (
	"encoding/json"
	"fmt"

	"github.com/acpdrive/acpdrive/domain"
)

// A prompt result's usage in the one meaning of every counter: codex-acp
// 2.x counts its 29 reasoning tokens inside the 61 output tokens, so the
// total is the sum without them.
func ExampleWireUsage_Usage() {
	var w domain.WireUsage
	_ = json.Unmarshal([]byte(`{"totalTokens":1794,"inputTokens":724,"cachedReadTokens":1009,"cachedWriteTokens":0,"outputTokens":61,"thoughtTokens":29}`), &w)
	u, _, ok := w.Usage()
	fmt.Println(ok, u.InputTokens, u.CacheReadTokens, u.OutputTokens, u.ReasoningTokens, u.TotalTokens)
	// Output: true 724 1009 61 29 1794
}

// A journal whose input counts the cached tokens (the Codex rollout)
// converts into the one meaning.
func ExampleUsageMeaning_Normalize() {
	raw := domain.Usage{InputTokens: 1733, CacheReadTokens: 1009, OutputTokens: 61, ReasoningTokens: 29, TotalTokens: 1794}
	u := domain.UsageMeaning{InputIncludesCache: true}.Normalize(raw)
	fmt.Println(u.InputTokens, u.TotalTokens)
	// Output: 724 1794
}

// A turn's cost is the difference of the session's cumulative cost; the
// run's cost ceiling counts it per currency.
func ExampleCostBudget() {
	b := domain.CostBudget{Max: 0.02}
	var before *domain.Cost
	for _, cumulative := range []float64{0.0100088, 0.0200176} {
		end := &domain.Cost{Amount: cumulative, Currency: "USD"}
		cost, _ := domain.TurnCost(before, end)
		b.Add(domain.TurnResult{Cost: &cost})
		before = end
		fmt.Println(domain.CostText(cost), b.Reached())
	}
	// Output:
	// 0.0100 USD false
	// 0.0100 USD true
}

// The context ceiling: used/size of the window at the latest turn's end.
func ExampleContextBudget() {
	b := domain.ContextBudget{Max: 0.5}
	b.Add(domain.TurnResult{Context: &domain.ContextUsage{Used: 600000, Size: 1000000}})
	fmt.Println(domain.ContextText(*b.Last), b.Reached())
	// Output: 600,000 / 1,000,000 true
}
