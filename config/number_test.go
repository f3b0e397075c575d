package config_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/acpdrive/acpdrive/config"
	"github.com/acpdrive/acpdrive/domain"
)

// TestCostAndContextCeilings: agent.max_cost and agent.max_context_fraction
// read numbers; a negative cost, a fraction above 1 or a non-number is an
// out_of_range or wrong-type error finding.
func TestCostAndContextCeilings(t *testing.T) {
	cfg, fs := config.Parse([]byte(front("agent:", "  command: gemini --acp", "  max_cost: 2.5", "  max_context_fraction: 0.8")), "WORKFLOW.md")
	assert.False(t, domain.HasErrors(fs), "%v", fs)
	assert.Equal(t, 2.5, cfg.MaxCost)
	assert.Equal(t, 0.8, cfg.MaxContextFraction)

	cfg, fs = config.Parse([]byte(front("agent:", "  command: gemini --acp", "  max_cost: 3", "  max_context_fraction: 1")), "WORKFLOW.md")
	assert.False(t, domain.HasErrors(fs), "%v", fs)
	assert.Equal(t, 3.0, cfg.MaxCost)
	assert.Equal(t, 1.0, cfg.MaxContextFraction)

	for _, bad := range []string{"  max_cost: -1", "  max_context_fraction: 1.5", "  max_cost: lots", "  max_context_fraction: [1]"} {
		_, fs := config.Parse([]byte(front("agent:", "  command: gemini --acp", bad)), "WORKFLOW.md")
		assert.True(t, domain.HasErrors(fs), "%s: %v", bad, fs)
	}
}
