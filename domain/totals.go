package domain

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Totals sums a session's turns (docs/behaviour.md#token-accounting):
// token usage figure by figure in the one meaning of every counter, over
// the measured turns only, and cost per currency (never summed across
// currencies). The zero value is empty and ready to use.
type Totals struct {
	// Turns counts the turns added.
	Turns int `json:"turns"`
	// Measured counts the turns that carried token figures.
	Measured int `json:"measured_turns"`
	// Usage is the sum of the measured turns' figures; zero when none was
	// measured (Measured tells "nothing measured" from zero).
	Usage Usage `json:"usage"`
	// Cost is the sum of the turns' costs per currency (ISO 4217 code);
	// nil when no turn carried a cost.
	Cost map[string]float64 `json:"cost,omitempty"`
}

// Add counts one turn's result.
func (t *Totals) Add(res TurnResult) {
	t.Turns++
	if res.Usage != nil {
		t.Usage = t.Usage.Add(*res.Usage)
		t.Measured++
	}
	if res.Cost != nil {
		if t.Cost == nil {
			t.Cost = make(map[string]float64)
		}
		t.Cost[res.Cost.Currency] += res.Cost.Amount
	}
}

// Clone returns a copy that shares nothing with t.
func (t Totals) Clone() Totals {
	t.Cost = maps.Clone(t.Cost)
	return t
}

// String prints the totals on one line: "<n> turn(s); tokens: <in> in,
// <out> out, cache <r> read / <w> written, <total> total over <m> measured
// turn(s)" ("tokens: not measured" when no turn was), then "; cost
// <amount> <currency>" per currency in alphabetical order.
func (t Totals) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d turn(s); tokens: ", t.Turns)
	if t.Measured == 0 {
		b.WriteString("not measured")
	} else {
		u := t.Usage
		fmt.Fprintf(&b, "%d in, %d out, cache %d read / %d written, %d total over %d measured turn(s)",
			u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens, u.TotalTokens, t.Measured)
	}
	for _, cur := range slices.Sorted(maps.Keys(t.Cost)) {
		fmt.Fprintf(&b, "; cost %.4f %s", t.Cost[cur], cur)
	}
	return b.String()
}
