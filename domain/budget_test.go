package domain_test

import (
	"testing"

	"github.com/acpdrive/acpdrive/domain"
)

func TestTokenBudget(t *testing.T) {
	turn := func(total int64) domain.TurnResult {
		return domain.TurnResult{Outcome: domain.OutcomeCompleted, Usage: &domain.Usage{InputTokens: total - 1, OutputTokens: 1, TotalTokens: total}}
	}
	unmeasured := domain.TurnResult{Outcome: domain.OutcomeCompleted}
	cases := []struct {
		name      string
		max       int64
		turns     []domain.TurnResult
		reached   bool
		unbounded bool
		total     int64
	}{
		{"no ceiling", 0, []domain.TurnResult{turn(500), turn(500)}, false, false, 1000},
		{"below", 1000, []domain.TurnResult{turn(400), turn(500)}, false, false, 900},
		{"exactly at the ceiling", 1000, []domain.TurnResult{turn(400), turn(600)}, true, false, 1000},
		{"crossed by one turn", 1000, []domain.TurnResult{turn(1500)}, true, false, 1500},
		{"nothing measured", 1000, []domain.TurnResult{unmeasured, unmeasured}, false, true, 0},
		{"an unmeasured turn counts nothing", 1000, []domain.TurnResult{unmeasured, turn(999)}, false, false, 999},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := domain.TokenBudget{Max: c.max}
			for _, r := range c.turns {
				b.Add(r)
			}
			if b.Reached() != c.reached || b.Unbounded() != c.unbounded || b.Used.TotalTokens != c.total {
				t.Fatalf("reached=%t unbounded=%t total=%d, want %t %t %d", b.Reached(), b.Unbounded(), b.Used.TotalTokens, c.reached, c.unbounded, c.total)
			}
		})
	}
}

func TestUsageAdd(t *testing.T) {
	a := domain.Usage{InputTokens: 1, OutputTokens: 2, CacheReadTokens: 3, CacheWriteTokens: 4, ReasoningTokens: 5, ToolUseTokens: 6, TotalTokens: 7}
	got := a.Add(a)
	want := domain.Usage{InputTokens: 2, OutputTokens: 4, CacheReadTokens: 6, CacheWriteTokens: 8, ReasoningTokens: 10, ToolUseTokens: 12, TotalTokens: 14}
	if got != want {
		t.Fatalf("Add = %+v, want %+v", got, want)
	}
}
