//go:build interop

package interop

import (
	"testing"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// The Claude agent ACP adapter hands the declared stdio servers to Claude
// Code, which starts the beacon.
func TestConfirmClaude(t *testing.T) {
	confirmCase{
		rig:       claudeRig,
		reply:     "Hello from Claude with a beacon.",
		confirmed: true,
		hidden:    []string{"McpResource"},
		mcpClient: "claude-code/2.1.83",
		gaps:      []domain.CapabilityLabel{domain.CapTokenCounts},
		wireUsage: true,
		usage:     fakes.Usage{Input: 100, Output: 6},
	}.run(t)
}
