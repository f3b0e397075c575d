package app

import (
	"strings"

	"github.com/acpdrive/acpdrive/domain"
)

// MsgTurnCeilingReached ends a run that sent Ceilings.MaxTurns prompts:
// no further prompt is sent (docs/behaviour.md#fleet).
const MsgTurnCeilingReached = "the run reached its turn ceiling; no further prompt was sent"

// Ceilings are a Run's ceilings (docs/behaviour.md#token-accounting): once
// one is reached no further prompt is sent. Zero means no ceiling.
type Ceilings struct {
	// MaxTokens bounds the measured turns' total tokens (agent.max_tokens).
	MaxTokens int64
	// MaxCost bounds the turns' cost in any one currency (agent.max_cost).
	MaxCost float64
	// MaxContextFraction bounds the context window's used/size
	// (agent.max_context_fraction), 0 < F ≤ 1.
	MaxContextFraction float64
	// MaxTurns bounds the prompts sent.
	MaxTurns int
}

// CeilingsOf is the ceilings a WORKFLOW.md configuration sets: tokens,
// cost and context (agent.max_turns bounds an orchestrator's continuation
// turns, not a run's prompts).
func CeilingsOf(cfg domain.Config) Ceilings {
	return Ceilings{MaxTokens: cfg.MaxTokens, MaxCost: cfg.MaxCost, MaxContextFraction: cfg.MaxContextFraction}
}

// Budgets is where a Run stands against its ceilings: each prompt's
// last attempt counted.
type Budgets struct {
	// Tokens, Cost and Context follow the measured figures.
	Tokens  domain.TokenBudget
	Cost    domain.CostBudget
	Context domain.ContextBudget
	// Turns counts the prompts sent; MaxTurns is its ceiling.
	Turns, MaxTurns int
}

// budgets is where a run starts.
func (c Ceilings) budgets() Budgets {
	return Budgets{
		Tokens:   domain.TokenBudget{Max: c.MaxTokens},
		Cost:     domain.CostBudget{Max: c.MaxCost},
		Context:  domain.ContextBudget{Max: c.MaxContextFraction},
		MaxTurns: c.MaxTurns,
	}
}

// add counts one prompt's result.
func (b *Budgets) add(res domain.TurnResult) {
	b.Turns++
	b.Tokens.Add(res)
	b.Cost.Add(res)
	b.Context.Add(res)
}

// Reached is the message of the first ceiling reached, "" for none.
func (b Budgets) Reached() string {
	switch {
	case b.Tokens.Reached():
		return domain.MsgTokenCeilingReached
	case b.Cost.Reached():
		return domain.MsgCostCeilingReached
	case b.Context.Reached():
		return domain.MsgContextCeilingReached
	case b.MaxTurns > 0 && b.Turns >= b.MaxTurns:
		return MsgTurnCeilingReached
	}
	return ""
}

// Unbounded is the closing remark for the ceilings nothing could
// enforce (the runtime reported no figure), "" for none.
func (b Budgets) Unbounded() string {
	var msgs []string
	if b.Tokens.Unbounded() {
		msgs = append(msgs, domain.MsgNoTokenUsage)
	}
	if b.Cost.Unbounded() {
		msgs = append(msgs, domain.MsgNoCost)
	}
	if b.Context.Unbounded() {
		msgs = append(msgs, domain.MsgNoContext)
	}
	return strings.Join(msgs, "; ")
}
