package ports

import (
	"context"

	"github.com/acpdrive/acpdrive/domain"
)

// MeasurementSource reads a specific runtime's token usage from outside the
// ACP wire (the protocol carries no spend counter).
type MeasurementSource interface {
	// RuntimeName is the agentInfo.name the source reads.
	RuntimeName() string
	// Claims reports whether a local launch of command names the runtime.
	Claims(command []string) bool
	// Arm prepares a claimed launch and returns the environment variables
	// the runtime must carry.
	Arm(ctx context.Context) (env []string, err error)
	// TurnUsage waits (bounded by ctx) for the figures of the turn that
	// just ended on sessionID; ok is false when none arrived.
	TurnUsage(ctx context.Context, sessionID string) (usage domain.Usage, model string, ok bool, err error)
	// Close releases whatever Arm created.
	Close() error
}
