package app

import "github.com/acpdrive/acpdrive/domain"

// runtimeFacts is the one table of runtime facts
// (docs/behaviour.md#token-accounting): what acpdrive knows about a
// runtime's wire, keyed by the agentInfo.name its handshake reports. A
// session reads its runtime's row by that name whatever its connection:
// with or without a measurement source, on a process of its own or a
// Host's. A function, not a variable: app declares no package-level
// variable.
func runtimeFacts() domain.RuntimeFactsTable {
	return domain.RuntimeFactsTable{
		// GitHub Copilot CLI: its session/prompt result carries the
		// session's running total, so its second turn's result carries
		// both turns' figures (docs/runtimes.md).
		{AgentName: "Copilot", Facts: domain.RuntimeFacts{UsageIsRunningTotal: true}},
	}
}
