//go:build interop

package interop

import (
	"testing"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// codex-acp starts the declared stdio servers when it creates the
// conversation.
func TestConfirmCodex(t *testing.T) {
	confirmCase{
		rig:       codexRig,
		reply:     "Hello from Codex with a beacon.",
		confirmed: true,
		mcpClient: "codex-mcp-client/0.137.0",
		gaps:      []domain.CapabilityLabel{domain.CapTokenCounts},
		usage:     fakes.Usage{Input: 100, Output: 6},
	}.run(t)
}
