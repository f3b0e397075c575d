package journaltail

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/domain"
)

// Figures are one turn's figures as read: the sum of its counted records,
// the last model named, and how many records counted.
type Figures struct {
	// Usage is the sum of the turn's counted records.
	Usage domain.Usage
	// Model is the model the last counted record named, if any.
	Model string
	// Records is the number of counted records.
	Records int
}

// Turns is the turn state of a measurement, as Wait sees it. Wait calls
// every method with the measurement's lock held.
type Turns interface {
	// Poll reads what the journal gained since the last poll.
	Poll()
	// TakeEnded removes and returns the ended turn not yet reported.
	TakeEnded() (Figures, bool)
	// TakeOpen removes and returns the turn being read if it has at
	// least one counted record.
	TakeOpen() (Figures, bool)
	// Grew is when a poll last found a new line.
	Grew() time.Time
	// Released reports whether the measurement was released.
	Released() bool
}

// Waiting configures Wait.
type Waiting struct {
	// Settle is how long the journal must stay unchanged after a counted
	// record to end a turn whose end was not written; zero: only the end
	// record or ctx's end ends a turn.
	Settle time.Duration
	// Poll is the pause between two polls.
	Poll time.Duration
	// Log receives a Debug record for each report; nil discards it.
	Log *slog.Logger
	// SessionID names the session in that record.
	SessionID string
}

// Wait waits, bounded by ctx, for the end of the turn that just ended and
// reports its figures, in the shape of ports.Measurement's TurnUsage: the
// turn's end record read, the journal settled after a counted record, or
// at ctx's end the records read so far (docs/behaviour.md#token-accounting).
// A turn with no counted record reports ok false. mu is held on entry and
// on return; Wait releases it while it sleeps. A measurement released
// meanwhile ends the wait with ErrReleased.
func Wait(ctx context.Context, mu sync.Locker, t Turns, w Waiting) (domain.Usage, string, bool, error) {
	t0 := time.Now()
	for {
		t.Poll()
		if f, ok := t.TakeEnded(); ok {
			return w.report(f, "end read", t0)
		}
		if w.Settle > 0 && time.Since(t.Grew()) >= w.Settle {
			if f, ok := t.TakeOpen(); ok {
				return w.report(f, "settled", t0)
			}
		}
		mu.Unlock()
		timer := time.NewTimer(w.Poll)
		select {
		case <-ctx.Done():
			timer.Stop()
			mu.Lock()
			if f, ok := t.TakeOpen(); ok {
				return w.report(f, "wait ended", t0)
			}
			return domain.Usage{}, "", false, ctx.Err()
		case <-timer.C:
		}
		mu.Lock()
		if t.Released() {
			return domain.Usage{}, "", false, ErrReleased
		}
	}
}

func (w Waiting) report(f Figures, how string, t0 time.Time) (domain.Usage, string, bool, error) {
	if w.Log != nil {
		w.Log.Debug("journal: turn figures read", "session_id", w.SessionID, "how", how,
			"records", f.Records, "waited_ms", time.Since(t0).Milliseconds())
	}
	if f.Records == 0 {
		return domain.Usage{}, "", false, nil
	}
	return f.Usage, f.Model, true, nil
}
