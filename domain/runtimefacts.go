package domain

import "strings"

// RuntimeFacts are what is known about one runtime's wire beyond what the
// protocol says: how a value it sends is to be read. They belong to the
// runtime, not to how it was launched or measured, so they apply on every
// connection to it, with or without a measurement source, local or remote,
// alone on its process or sharing it (docs/behaviour.md#token-accounting).
// The zero value is a runtime that means what the protocol means.
type RuntimeFacts struct {
	// UsageIsRunningTotal: the usage that ends a turn (ACP v1's
	// session/prompt result's usage, ACP v2's ending state_update's) is
	// the session's running total, not the turn's figure; the turn's
	// figure is the difference from the previous turn's
	// (docs/behaviour.md#token-accounting).
	UsageIsRunningTotal bool
}

// KnownRuntime is one row of a [RuntimeFactsTable]: a runtime by the name
// its handshake reports, and its facts.
type KnownRuntime struct {
	// AgentName is the agentInfo.name the runtime reports in initialize,
	// compared whole and without regard to case.
	AgentName string
	// Facts are the runtime's facts.
	Facts RuntimeFacts
}

// RuntimeFactsTable is the table of runtime facts keyed by the agent's
// identity (docs/behaviour.md#token-accounting): one row per runtime whose
// wire departs from the protocol's meaning.
type RuntimeFactsTable []KnownRuntime

// Lookup returns the facts of the runtime whose handshake reported
// agentName (agentInfo.name): those of the first row whose AgentName is
// agentName regardless of case, else the zero RuntimeFacts. An empty name
// (a runtime that sent no agentInfo) matches no row.
func (t RuntimeFactsTable) Lookup(agentName string) RuntimeFacts {
	if agentName == "" {
		return RuntimeFacts{}
	}
	for _, r := range t {
		if strings.EqualFold(r.AgentName, agentName) {
			return r.Facts
		}
	}
	return RuntimeFacts{}
}
