//go:build interop

package interop

import (
	"testing"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// codex-acp starts the declared stdio servers when it creates the
// conversation: the old pin and today's release.
func TestConfirmCodex(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		row, mcpClient string
		wireUsage      bool // the prompt results carry usage (2.x)
	}{
		{"codex", "codex-mcp-client/0.137.0", false},
		{"codex-current", "codex-mcp-client/0.166.0", true},
	} {
		t.Run(c.row, func(t *testing.T) {
			confirmCase{
				rig:       func(t *testing.T) (*rig, *fakes.Server) { return codexRigOf(t, c.row) },
				reply:     "Hello from Codex with a beacon.",
				confirmed: true,
				mcpClient: c.mcpClient,
				gaps:      []domain.CapabilityLabel{domain.CapTokenCounts},
				wireUsage: c.wireUsage,
				usage:     fakes.Usage{Input: 100, Output: 6},
			}.run(t)
		})
	}
}
