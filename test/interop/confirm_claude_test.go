//go:build interop

package interop

import (
	"testing"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// The Claude agent ACP adapter hands the declared stdio servers to Claude
// Code, which starts the beacon: the old pin and today's release.
func TestConfirmClaude(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ row, mcpClient string }{
		{"claude", "claude-code/2.1.83"},
		{"claude-current", "claude-code/2.1.318"},
	} {
		t.Run(c.row, func(t *testing.T) {
			confirmCase{
				rig:       func(t *testing.T) (*rig, *fakes.Server) { return claudeRigOf(t, c.row) },
				reply:     "Hello from Claude with a beacon.",
				confirmed: true,
				hidden:    []string{"McpResource"},
				mcpClient: c.mcpClient,
				gaps:      []domain.CapabilityLabel{domain.CapTokenCounts},
				wireUsage: true, // both pins report usage in their prompt results
				usage:     fakes.Usage{Input: 100, Output: 6},
			}.run(t)
		})
	}
}
