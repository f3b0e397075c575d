package app

import (
	"context"
	"math"

	"github.com/acpdrive/acpdrive/domain"
)

// crossCheckTolerance is how far, as a fraction of the protocol's total,
// a journal's total may differ from the protocol's for the same turn
// before acpdrive warns (docs/behaviour.md#token-accounting): journals
// count side calls (a title, a reviewer model) the protocol's figure
// leaves out, so a small difference is expected.
const crossCheckTolerance = 0.05

// Cross-check and cost texts (docs/behaviour.md#token-accounting).
const (
	msgCrossCheck         = "turn measured by the protocol and by a journal"
	msgCrossCheckDisagree = "the journal's figure for the turn disagrees with the protocol's beyond the tolerance; the protocol's is kept"
	msgCostCurrency       = "the session's cost changed currency; the turn's cost is not reported"
	msgRunningTotalFell   = "the runtime's running total of usage fell; the prompt result's figure is taken as the turn's"
)

// measure settles the turn's figures (docs/behaviour.md#token-accounting):
// the protocol's, when the turn's end carried usage (the prompter put it
// on res), else the journal source's; both, when both exist, are
// cross-checked. It adds the turn's cost and context use from
// usage_update and emits one token_usage event for a measured turn.
func (s *Session) measure(ctx context.Context, res *domain.TurnResult) {
	wire := res.Usage != nil
	if wire && runtimeFacts().Lookup(s.res.agent.Name).UsageIsRunningTotal {
		// docs/behaviour.md#token-accounting: this runtime's prompt result
		// carries the session's running total (the table of runtime facts,
		// by the handshake's agent name, whatever the connection).
		u, ok := s.stream.ledger.turnOfRunningTotal(*res.Usage)
		if !ok {
			s.log.Debug(msgRunningTotalFell, "agent_name", s.res.agent.Name)
			u = *res.Usage
		}
		res.Usage = &u
	}
	if wire {
		if s.stream.ledger.measuredFromWire() {
			s.caps.measuredByProtocol()
		}
	}
	f := s.conn.meter.turnEnded(ctx, s.ID(), s.opts.Settings.EffectiveReadTimeout(), *res)
	if f.dropped && !s.stream.ledger.wireMeasured() {
		s.caps.lower(domain.CapTokenCounts)
	}
	switch {
	case wire && f.usage != nil:
		s.crossCheck(res, f)
		if res.Model == "" {
			res.Model = f.model
		}
	case f.usage != nil:
		res.Usage, res.Model, res.Source = f.usage, f.model, f.source
	}
	cost, used, changed := s.stream.ledger.end()
	if changed {
		s.log.Warn(msgCostCurrency)
	}
	res.Cost, res.Context = cost, used
	if res.Usage != nil {
		s.stream.emit(domain.Event{Type: domain.EventTokenUsage, Usage: res.Usage, Model: res.Model,
			Source: res.Source, Cost: res.Cost, Breakdown: res.Breakdown})
	}
}

// crossCheck compares the protocol's figure on res with the journal's:
// a debug line with both always, a Warn past crossCheckTolerance.
func (s *Session) crossCheck(res *domain.TurnResult, f turnFigures) {
	p, j := res.Usage.TotalTokens, f.usage.TotalTokens
	s.log.Debug(msgCrossCheck, "protocol_source", res.Source, "journal_source", f.source,
		"protocol_total", p, "journal_total", j,
		"protocol_input", res.Usage.InputTokens, "journal_input", f.usage.InputTokens,
		"protocol_output", res.Usage.OutputTokens, "journal_output", f.usage.OutputTokens)
	if disagree(p, j) {
		s.log.Warn(msgCrossCheckDisagree, "protocol_source", res.Source, "journal_source", f.source,
			"protocol_total", p, "journal_total", j, "tolerance", crossCheckTolerance)
	}
}

// disagree reports whether two totals differ by more than the tolerance
// of the first.
func disagree(protocol, journal int64) bool {
	return math.Abs(float64(journal-protocol)) > crossCheckTolerance*math.Max(float64(protocol), 1)
}
