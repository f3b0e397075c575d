package bench

import (
	"context"
	"testing"
	"time"

	"github.com/acpdrive/acpdrive/domain"
)

// millionBurst is the size of the no-loss burst.
const millionBurst = 1_000_000

// TestMillionBurstNoLoss: acpdrive takes in a 1,000,000-notification burst
// with nothing lost, the turn completes, and no member of the agent's
// process group is left once the session stopped. The same burst then runs
// through the Go SDK, whose result is only logged.
func TestMillionBurstNoLoss(t *testing.T) {
	if testing.Short() {
		t.Skip("the million-notification burst is not short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	t.Run("acpdrive", func(t *testing.T) {
		var client *acpdriveClient
		start := func(ctx context.Context, s *sink) (burstClient, error) {
			c, err := startAcpdrive(true)(ctx, s)
			if err == nil {
				client = c.(*acpdriveClient)
			}
			return c, err
		}
		res, err := runBurst(ctx, start, millionBurst, costTrivial)
		if err != nil {
			t.Fatalf("start: %v", err)
		}
		t.Logf("acpdrive: %s", res.summary())
		if res.err != nil {
			t.Errorf("turn error: %v", res.err)
		}
		if res.outcome != string(domain.EventTurnCompleted) || !client.completed.Load() {
			t.Errorf("turn outcome %q (turn_completed event seen: %v), want %q",
				res.outcome, client.completed.Load(), domain.EventTurnCompleted)
		}
		if res.received != millionBurst {
			t.Errorf("agent text chunks received = %d, want %d (lost %d)", res.received, millionBurst, res.lost())
		}
		if got := client.notifEvents.Load(); got != millionBurst {
			t.Errorf("per-chunk message_chunk events = %d, want %d", got, millionBurst)
		}
		if res.stopErr != nil {
			t.Errorf("stop: %v", res.stopErr)
		}
		if len(res.survivors) > 0 {
			t.Errorf("agent process group %d still has live members %v after stop", client.pid(), res.survivors)
		}
	})

	t.Run("go-sdk", func(t *testing.T) {
		res, err := runBurst(ctx, startSDK, millionBurst, costTrivial)
		if err != nil {
			t.Logf("go-sdk: start failed: %v", err)
			return
		}
		t.Logf("go-sdk: %s", res.summary())
		if len(res.survivors) > 0 {
			t.Logf("go-sdk: agent process group still has live members %v after stop", res.survivors)
		}
	})
}
