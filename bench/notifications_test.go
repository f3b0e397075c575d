package bench

import (
	"context"
	"testing"
	"time"
)

// BenchmarkNotifications measures how fast each client takes in a burst of
// agent_message_chunk notifications when its handler does almost nothing
// (one atomic add). One op is one turn of -burst notifications (default
// 100,000) on a fresh `acpdrive agent` process; the process start, the
// handshake and the teardown are outside the timer.
//
// Metrics: notifs/s = notifications handled / time from sending the prompt
// to the last one handled with the turn over; stream-notifs/s = the same
// from the first notification handled (leaves out the prompt's round trip
// and the agent's start of the turn); lost/op = notifications the agent
// wrote that never reached the handler; disconnects/op = the share of ops
// whose connection ended before the turn's response was handled. ns/op and
// the allocation figures cover the turn only.
func BenchmarkNotifications(b *testing.B) {
	benchClients(b, costTrivial)
}

// BenchmarkNotificationsBusyHandler is BenchmarkNotifications with a
// handler that costs about 1µs of CPU plus a mutex-guarded append per
// notification, on both sides.
func BenchmarkNotificationsBusyHandler(b *testing.B) {
	benchClients(b, costBusy)
}

func benchClients(b *testing.B, cost handlerCost) {
	b.Run("acpdrive", func(b *testing.B) { benchBursts(b, startAcpdrive(false), cost) })
	b.Run("go-sdk", func(b *testing.B) { benchBursts(b, startSDK, cost) })
}

func benchBursts(b *testing.B, start starter, cost handlerCost) {
	n := *burstFlag
	prompt := burstPrompt(n)
	ctx := context.Background()
	var (
		received, lost, disconnects int64
		streamed                    int64         // chunks after each op's first
		busy, streaming             time.Duration // prompt sent → end; first chunk → end
		firstErr                    error
	)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s := newSink(cost)
		c, err := start(ctx, s)
		if err != nil {
			b.Fatalf("start: %v", err)
		}
		b.StartTimer()
		rep := c.turn(ctx, prompt)
		b.StopTimer()
		stopCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		if err := c.stop(stopCtx); err != nil {
			b.Logf("stop: %v", err)
		}
		cancel()
		if m := groupMembers(c.pid()); len(m) > 0 {
			b.Fatalf("agent process group %d still has live members %v after stop", c.pid(), m)
		}
		got := s.received()
		received += got
		lost += int64(n) - got
		busy += rep.elapsed
		if w := streamWindow(s.firstAt(), rep.end); w > 0 && got > 1 {
			streaming += w
			streamed += got - 1
		}
		if rep.disconnected {
			disconnects++
		}
		if rep.err != nil && firstErr == nil {
			firstErr = rep.err
		}
	}
	if busy > 0 {
		b.ReportMetric(float64(received)/busy.Seconds(), "notifs/s")
	}
	if streaming > 0 {
		b.ReportMetric(float64(streamed)/streaming.Seconds(), "stream-notifs/s")
	}
	b.ReportMetric(float64(lost)/float64(b.N), "lost/op")
	b.ReportMetric(float64(disconnects)/float64(b.N), "disconnects/op")
	if firstErr != nil {
		b.Logf("handler %s, burst %d: %d of %d ops ended with an error; first: %v",
			cost, n, disconnects, b.N, firstErr)
	}
}
