package bench

import (
	"context"
	"testing"
	"time"

	"github.com/acpdrive/acpdrive/domain"
)

// TestBurstSweep runs bursts around the SDK's 1024-notification queue
// with both handler costs and logs what each client received, to show where
// the SDK's queue overflows. acpdrive must lose nothing at every size; the
// SDK's results are only logged.
func TestBurstSweep(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sizes := []int{500, 1000, 1500, 2000, 5000, 20000}
	for _, cost := range []handlerCost{costTrivial, costBusy} {
		for _, n := range sizes {
			a, err := runBurst(ctx, startAcpdrive(false), n, cost)
			if err != nil {
				t.Fatalf("acpdrive start: %v", err)
			}
			if a.lost() != 0 || a.outcome != string(domain.EventTurnCompleted) {
				t.Errorf("acpdrive, %s handler, burst %d: %s", cost, n, a.summary())
			}
			if len(a.survivors) > 0 {
				t.Errorf("acpdrive, burst %d: process group members %v survived stop", n, a.survivors)
			}
			s, err := runBurst(ctx, startSDK, n, cost)
			if err != nil {
				t.Fatalf("go-sdk start: %v", err)
			}
			t.Logf("%-8s burst %6d | acpdrive received %6d lost %6d | go-sdk received %6d lost %6d disconnected %-5v",
				cost, n, a.received, a.lost(), s.received, s.lost(), s.disconnected)
		}
	}
}
