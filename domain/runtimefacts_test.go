package domain_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/acpdrive/acpdrive/domain"
)

func TestRuntimeFactsLookup(t *testing.T) {
	running := domain.RuntimeFacts{UsageIsRunningTotal: true}
	table := domain.RuntimeFactsTable{
		{AgentName: "Summing", Facts: running},
		{AgentName: "plain-runtime", Facts: domain.RuntimeFacts{}},
		{AgentName: "summing", Facts: domain.RuntimeFacts{}}, // shadowed by the first row
	}
	cases := []struct {
		name, agent string
		want        domain.RuntimeFacts
	}{
		{"the name as reported", "Summing", running},
		{"another case", "SUMMING", running},
		{"the first row wins", "summing", running},
		{"a row with no facts", "plain-runtime", domain.RuntimeFacts{}},
		{"an unknown runtime", "other-runtime", domain.RuntimeFacts{}},
		{"a name that only contains a row's", "Summing-next", domain.RuntimeFacts{}},
		{"spaces are part of the name", " Summing", domain.RuntimeFacts{}},
		{"no agentInfo", "", domain.RuntimeFacts{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, table.Lookup(c.agent))
		})
	}
	assert.Equal(t, domain.RuntimeFacts{}, domain.RuntimeFactsTable(nil).Lookup("Summing"), "an empty table knows nothing")
	assert.Equal(t, domain.RuntimeFacts{}, domain.RuntimeFactsTable{{AgentName: "", Facts: running}}.Lookup(""),
		"a row without a name never matches a runtime that sent none")
}
