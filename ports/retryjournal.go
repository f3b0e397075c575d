package ports

import (
	"time"

	"github.com/acpdrive/acpdrive/domain"
)

// RetryJournal is an optional interface of a Measurement whose runtime's
// journal records the runtime's own retries of provider failures (Claude
// Code's transcript: each API error, its status, its retry delay and a
// spent usage window's reset; docs/behaviour.md#runtime-retrying).
type RetryJournal interface {
	// TurnRetries returns the retries the journal recorded for the turn
	// running or just ended on sessionID (since the last turn TurnUsage
	// settled), oldest first; none when the journal has none or cannot
	// be read. now measures a usage window's reset.
	TurnRetries(sessionID string, now time.Time) []domain.RuntimeRetry
}
