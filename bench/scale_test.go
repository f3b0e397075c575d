//go:build linux

package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpdrive/acpdrive/domain"
)

// BenchmarkIdleSessions holds N idle sessions at once and reports what
// each costs this process: live heap after GC, RSS, descriptors, and the
// process's OS threads with all N alive. A start that fails is counted.
// Run it with -benchtime=1x: one op starts, measures and stops N sessions.
func BenchmarkIdleSessions(b *testing.B) {
	for _, n := range []int{1, 100, 1000, 2000} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			checkLimits(b, n)
			env := newScaleEnv(b)
			ctx := scaleCtx(b)
			var heap, rss, fds, threads, failures float64
			for b.Loop() {
				before := measureUsage()
				sessions, failed, firstErr := env.startMany(ctx, n)
				if firstErr != nil {
					b.Logf("%d of %d starts failed; the first: %v", failed, n, firstErr)
				}
				during := measureUsage()
				live := float64(max(len(sessions), 1))
				heap += float64(int64(during.heap)-int64(before.heap)) / live
				rss += float64(during.rss-before.rss) / live
				fds += float64(during.fds-before.fds) / live
				threads += float64(during.threads)
				failures += float64(failed)
				if err := stopAll(ctx, sessions); err != nil {
					b.Errorf("stop: %v", err)
				}
			}
			k := float64(b.N)
			b.ReportMetric(heap/k, "heap-B/session")
			b.ReportMetric(rss/k, "rss-B/session")
			b.ReportMetric(fds/k, "fds/session")
			b.ReportMetric(threads/k, "threads")
			b.ReportMetric(failures/k, "start-failures")
		})
	}
}

// BenchmarkConcurrentTurns runs turns on N live sessions at once, each
// session one turn after another, until b.N turns are done in all; a turn
// is one prompt answered by one chunk and end_turn.
func BenchmarkConcurrentTurns(b *testing.B) {
	for _, n := range []int{1, 100, 2000} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			checkLimits(b, n)
			env := newScaleEnv(b)
			ctx := scaleCtx(b)
			sessions, failed, firstErr := env.startMany(ctx, n)
			defer func() {
				if err := stopAll(ctx, sessions); err != nil {
					b.Errorf("stop: %v", err)
				}
			}()
			if failed > 0 {
				b.Fatalf("%d of %d starts failed; the first: %v", failed, n, firstErr)
			}
			var left atomic.Int64
			left.Store(int64(b.N))
			var bad atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			t0 := time.Now()
			for _, s := range sessions {
				wg.Go(func() {
					for left.Add(-1) >= 0 {
						if res := s.Turn(ctx, "hello"); res.Err != nil || res.Outcome.Event() != domain.EventTurnCompleted {
							bad.Add(1)
						}
					}
				})
			}
			wg.Wait()
			elapsed := time.Since(t0)
			b.StopTimer()
			if bad.Load() > 0 {
				b.Errorf("%d turns did not complete", bad.Load())
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "turns/s")
		})
	}
}

// BenchmarkStopAll stops 2,000 live sessions at once and reports how long
// until every Stop returned, and what was left in the process table
// (agents or members of their groups, zombies included). Run it with
// -benchtime=1x.
func BenchmarkStopAll(b *testing.B) {
	const n = 2000
	b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
		checkLimits(b, n)
		env := newScaleEnv(b)
		ctx := scaleCtx(b)
		var ms, survivors float64
		for b.Loop() {
			b.StopTimer()
			sessions, failed, firstErr := env.startMany(ctx, n)
			if failed > 0 {
				b.Errorf("%d of %d starts failed; the first: %v", failed, n, firstErr)
			}
			agents := pids(sessions)
			b.StartTimer()
			t0 := time.Now()
			err := stopAll(ctx, sessions)
			ms += float64(time.Since(t0).Milliseconds())
			if err != nil {
				b.Errorf("stop: %v", err)
			}
			survivors += float64(leftover(agents))
		}
		k := float64(b.N)
		b.ReportMetric(ms/k, "stop-all-ms")
		b.ReportMetric(survivors/k, "survivors")
	})
}

// BenchmarkStopOne times one Stop of a session whose agent is idle, while
// 0 or 2,000 other sessions stay alive. Each op starts its session with
// the timer stopped.
func BenchmarkStopOne(b *testing.B) {
	for _, others := range []int{0, 2000} {
		b.Run(fmt.Sprintf("others=%d", others), func(b *testing.B) {
			checkLimits(b, others+1)
			env := newScaleEnv(b)
			ctx := scaleCtx(b)
			alive, failed, firstErr := env.startMany(ctx, others)
			defer func() {
				if err := stopAll(ctx, alive); err != nil {
					b.Errorf("stop the others: %v", err)
				}
			}()
			if failed > 0 {
				b.Fatalf("%d of %d starts failed; the first: %v", failed, others, firstErr)
			}
			for b.Loop() {
				b.StopTimer()
				s, err := env.start(ctx)
				if err != nil {
					b.Fatalf("start: %v", err)
				}
				b.StartTimer()
				if err := s.Stop(ctx); err != nil {
					b.Errorf("stop: %v", err)
				}
			}
		})
	}
}

// heapSlopeSessions is how many sessions BenchmarkHeapSlope runs in turn.
const heapSlopeSessions = 10_000

// BenchmarkHeapSlope starts and stops 10,000 sessions one after another
// (each agent gives its session a new ID) and reports the least-squares
// slope of the live heap over the session count, sampled every 500
// sessions after the first 500: what each session leaves behind. Run it
// with -benchtime=1x.
func BenchmarkHeapSlope(b *testing.B) {
	env := newScaleEnv(b)
	ctx := scaleCtx(b)
	const every = 500
	var slope float64
	for b.Loop() {
		var xs, ys []float64
		for i := 1; i <= heapSlopeSessions; i++ {
			if err := startStop(ctx, env); err != nil {
				b.Fatalf("session %d: %v", i, err)
			}
			if i%every == 0 && i > every {
				xs = append(xs, float64(i))
				ys = append(ys, float64(heapAfterGC()))
			}
		}
		slope += leastSquaresSlope(xs, ys)
		b.Logf("creation store entries at the end: %d", env.creations.Len())
	}
	b.ReportMetric(slope/float64(b.N), "heap-slope-B/session")
}

// startStop runs one session's life: start, then Stop.
func startStop(ctx context.Context, env *scaleEnv) error {
	s, err := env.start(ctx)
	if err != nil {
		return err
	}
	return s.Stop(ctx)
}

// leastSquaresSlope is the slope of the least-squares line through the
// points.
func leastSquaresSlope(xs, ys []float64) float64 {
	n := float64(len(xs))
	if n < 2 {
		return 0
	}
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
		sxx += xs[i] * xs[i]
		sxy += xs[i] * ys[i]
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / d
}
