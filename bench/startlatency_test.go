package bench

import (
	"context"
	"testing"
	"time"
)

// BenchmarkStartLatency measures how long a session takes to start: from
// launching a fresh reference agent to a session ready for its first
// prompt (initialize and session/new answered). The teardown is outside
// the timer.
//
//   - library: app.Start with the localexec launcher (process group,
//     containment, the handshake's bounds and checks).
//   - minimal: floorClient's launch and handshake: os/exec, two literal
//     request lines, a bufio.Scanner and json.Unmarshal.
func BenchmarkStartLatency(b *testing.B) {
	for _, c := range []struct {
		name  string
		start starter
	}{{"library", startAcpdrive(false)}, {"minimal", startFloor}} {
		b.Run("client="+c.name, func(b *testing.B) {
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				client, err := c.start(ctx, newSink(costTrivial))
				b.StopTimer()
				if err != nil {
					b.Fatal(err)
				}
				stopCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
				if err := client.stop(stopCtx); err != nil {
					b.Logf("stop: %v", err)
				}
				cancel()
				b.StartTimer()
			}
		})
	}
}
