package domain

import "strconv"

// Cost and context ceiling messages (docs/behaviour.md#token-accounting).
const (
	// MsgCostCeilingReached ends a run whose turns' cost reached
	// agent.max_cost: no further prompt is sent.
	MsgCostCeilingReached = "the run reached its cost ceiling (agent.max_cost); no further prompt was sent"
	// MsgNoCost closes a run with a cost ceiling whose runtime reported no
	// cost.
	MsgNoCost = "run reported no cost, cost ceiling could not bound it"
	// MsgContextCeilingReached ends a run whose context window filled to
	// agent.max_context_fraction: no further prompt is sent.
	MsgContextCeilingReached = "the session's context window reached its ceiling (agent.max_context_fraction); no further prompt was sent"
	// MsgNoContext closes a run with a context ceiling whose runtime
	// reported no context window.
	MsgNoContext = "run reported no context window, context ceiling could not bound it"
)

// CostBudget follows a run's turn costs against a ceiling (agent.max_cost,
// in the runtime's currency; zero or negative: none). Costs are kept per
// currency and never summed across currencies; the ceiling is reached when
// the total of any one currency reaches it. The zero value has no
// ceiling.
type CostBudget struct {
	// Max is the ceiling.
	Max float64
	// Spent is the run's cost per currency, in the order the currencies
	// first appeared.
	Spent []Cost
	// Measured counts the turns that carried a cost.
	Measured int
}

// Add counts one turn's cost.
func (b *CostBudget) Add(res TurnResult) {
	if res.Cost == nil {
		return
	}
	b.Measured++
	for i := range b.Spent {
		if b.Spent[i].Currency == res.Cost.Currency {
			b.Spent[i].Amount += res.Cost.Amount
			return
		}
	}
	b.Spent = append(b.Spent, *res.Cost)
}

// Reached reports whether one currency's total reached the ceiling.
func (b CostBudget) Reached() bool {
	if b.Max <= 0 {
		return false
	}
	for _, c := range b.Spent {
		if c.Amount >= b.Max {
			return true
		}
	}
	return false
}

// Unbounded reports a ceiling that no cost could enforce.
func (b CostBudget) Unbounded() bool { return b.Max > 0 && b.Measured == 0 }

// ContextBudget follows the context window's fill against a ceiling
// (agent.max_context_fraction: used/size; zero or negative: none). The
// zero value has no ceiling.
type ContextBudget struct {
	// Max is the ceiling as a fraction of the window (0 < Max ≤ 1).
	Max float64
	// Last is the context use at the end of the latest turn that had one.
	Last *ContextUsage
}

// Add counts one turn's context use.
func (b *ContextBudget) Add(res TurnResult) {
	if res.Context != nil && res.Context.Size > 0 {
		c := *res.Context
		b.Last = &c
	}
}

// Reached reports whether used/size reached the ceiling.
func (b ContextBudget) Reached() bool {
	return b.Max > 0 && b.Last != nil && float64(b.Last.Used)/float64(b.Last.Size) >= b.Max
}

// Unbounded reports a ceiling that no context figure could enforce.
func (b ContextBudget) Unbounded() bool { return b.Max > 0 && b.Last == nil }

// CostText renders a cost for a person: "0.0100 USD".
func CostText(c Cost) string {
	t := strconv.FormatFloat(c.Amount, 'f', 4, 64)
	if c.Currency != "" {
		t += " " + c.Currency
	}
	return t
}

// ContextText renders the context window's use for a person with
// thousands separators: "3,014 / 1,000,000".
func ContextText(c ContextUsage) string {
	return groupDigits(c.Used) + " / " + groupDigits(c.Size)
}

func groupDigits(n uint64) string {
	s := strconv.FormatUint(n, 10)
	out := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}
