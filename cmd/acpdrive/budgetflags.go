package main

import (
	"errors"
	"flag"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
)

// budgetFlags are the run's cost and context ceilings
// (docs/behaviour.md#token-accounting); the token ceiling is --max-tokens.
type budgetFlags struct {
	maxCost            float64
	maxContextFraction float64
}

// register defines --max-cost and --max-context-fraction.
func (b *budgetFlags) register(fs *flag.FlagSet) {
	fs.Float64Var(&b.maxCost, "max-cost", 0, "stop before the next prompt once the turns cost this `AMOUNT` in the runtime's currency (0: no ceiling; agent.max_cost)")
	fs.Float64Var(&b.maxContextFraction, "max-context-fraction", 0, "stop before the next prompt once the context window's used/size reaches `F` (0 < F ≤ 1; 0: no ceiling; agent.max_context_fraction)")
}

// apply puts the flags given into cfg (all of them without a workflow,
// else only those given on the command line) and checks them.
func (b budgetFlags) apply(cfg *domain.Config, set map[string]bool, workflow bool) error {
	if !workflow || set["max-cost"] {
		cfg.MaxCost = b.maxCost
	}
	if !workflow || set["max-context-fraction"] {
		cfg.MaxContextFraction = b.maxContextFraction
	}
	var errs []error
	if cfg.MaxCost < 0 {
		errs = append(errs, errors.New("--max-cost: want a non-negative amount"))
	}
	if cfg.MaxContextFraction < 0 || cfg.MaxContextFraction > 1 {
		errs = append(errs, errors.New("--max-context-fraction: want a fraction from 0 to 1"))
	}
	return errors.Join(errs...)
}

// runBudgets is where a run stands against its ceilings, as the
// output shows it (app.Budgets; the run itself is the library's).
type runBudgets struct {
	tokens domain.TokenBudget
	cost   domain.CostBudget
}

// budgetsOf is b as the output shows it.
func budgetsOf(b app.Budgets) runBudgets { return runBudgets{tokens: b.Tokens, cost: b.Cost} }
