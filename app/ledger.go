package app

import (
	"sync"

	"github.com/acpdrive/acpdrive/domain"
)

// ledger follows what usage_update says of one session between and during
// turns (docs/behaviour.md#token-accounting): the cumulative cost before a
// turn and at its end, and the context window's use at its end. Each event
// stream has its own (a child session's too): it is fed the context_usage
// events of its own stream only, on the reader goroutine, and read by the
// turn that ends (a child's by Session.Children).
type ledger struct {
	mu       sync.Mutex
	cost     *domain.Cost         // the latest cumulative cost, nil before any
	before   *domain.Cost         // the cumulative cost when the running turn began
	turnCost bool                 // a cost arrived during the running turn
	context  *domain.ContextUsage // the latest context use during the running turn
	latestCx *domain.ContextUsage // the latest context use, whatever the turn
	wire     bool                 // some turn was measured from the protocol
	running  *domain.Usage        // the last running total a prompt result carried
}

// turnOfRunningTotal is the turn's share of a running total the protocol
// carried: the difference from the previous one (the first is the turn's
// own). ok is false when a counter fell (not a running total after all):
// the value is then taken as the turn's own and becomes the new baseline.
func (l *ledger) turnOfRunningTotal(total domain.Usage) (domain.Usage, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	prev := l.running
	l.running = &total
	if prev == nil {
		return total, true
	}
	return total.Sub(*prev)
}

// observe reads one emitted event.
func (l *ledger) observe(ev domain.Event) {
	if ev.Type != domain.EventContextUsage || ev.Context == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	c := *ev.Context
	c.Cost = nil
	if ev.Context.Cost != nil {
		cost := *ev.Context.Cost
		l.cost, l.turnCost = &cost, true
		c.Cost = &cost
	}
	l.context, l.latestCx = &c, &c
}

// latest is a copy of the latest context use (with its cost), nil before
// any usage_update.
func (l *ledger) latest() *domain.ContextUsage {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.latestCx == nil {
		return nil
	}
	c := *l.latestCx
	if c.Cost != nil {
		cost := *c.Cost
		c.Cost = &cost
	}
	return &c
}

// begin marks a turn's start: the cost so far is its baseline.
func (l *ledger) begin() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.before, l.turnCost, l.context = l.cost, false, nil
}

// end is the running turn's cost (nil when no cost arrived during it, or
// the currency changed: changed is then true) and its context use at the
// end (nil when no usage_update arrived during it).
func (l *ledger) end() (cost *domain.Cost, context *domain.ContextUsage, changed bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.turnCost {
		if c, ok := domain.TurnCost(l.before, l.cost); ok {
			cost = &c
		} else {
			changed = true
		}
	}
	if l.context != nil {
		c := *l.context
		context = &c
	}
	return cost, context, changed
}

// measuredFromWire records that a turn was measured from the protocol and
// reports whether it is the first.
func (l *ledger) measuredFromWire() (first bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	first = !l.wire
	l.wire = true
	return first
}

// wireMeasured reports whether some turn was measured from the protocol.
func (l *ledger) wireMeasured() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.wire
}
