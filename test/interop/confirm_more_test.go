//go:build interop

package interop

import (
	"testing"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// Copilot CLI drops every stdio server passed on session/new (see
// TestCopilotMCP): the beacon is never started, so the confirmation lowers
// tool servers, where without it the record would say delivered.
func TestConfirmCopilot(t *testing.T) {
	t.Parallel()
	confirmCase{
		rig:       func(t *testing.T) (*rig, *fakes.Server) { return copilotRig(t) },
		reply:     "Hello from Copilot with a beacon.",
		confirmed: false,
		gaps:      []domain.CapabilityLabel{domain.CapTokenCounts},
		wireUsage: true,
		usage:     fakes.Usage{Input: 100, Output: 6},
	}.run(t)
}

// Qwen Code starts the declared stdio servers (see TestQwenMCP).
func TestConfirmQwen(t *testing.T) {
	t.Parallel()
	confirmCase{
		rig:       func(t *testing.T) (*rig, *fakes.Server) { return qwenRig(t) },
		reply:     "Hello from Qwen with a beacon.",
		confirmed: true,
		gaps:      []domain.CapabilityLabel{domain.CapTokenCounts},
		usage:     fakes.Usage{Input: 100, Output: 6},
	}.run(t)
}

// opencode starts the declared stdio servers (see TestOpencodeMCP).
func TestConfirmOpencode(t *testing.T) {
	t.Parallel()
	confirmCase{
		rig:       func(t *testing.T) (*rig, *fakes.Server) { return opencodeRig(t, "") },
		reply:     "Hello from opencode with a beacon.",
		confirmed: true,
		gaps:      []domain.CapabilityLabel{domain.CapTokenCounts},
		wireUsage: true,
		usage:     fakes.Usage{Input: 100, Output: 6},
	}.run(t)
}
