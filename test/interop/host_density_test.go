//go:build interop

package interop

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/internal/testsupport/proctest"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// TestHostDensityMeasured measures, against the fake models, resident
// memory per session (the sum of the process trees' RSS over the
// sessions) and the time from asking for a session to its first streamed
// chunk, for sessions sharing one process and for a process per session
// (docs/behaviour.md#runtime-host). It asserts nothing of the figures:
// they go to BENCHMARKS.md. Set ACPDRIVE_DENSITY=N (sessions) to run it.
func TestHostDensityMeasured(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("ACPDRIVE_DENSITY"))
	if n <= 0 {
		t.Skip("set ACPDRIVE_DENSITY=N to measure N sessions")
	}
	for _, c := range currentRows() {
		for _, shared := range []bool{true, false} {
			name := c.row + "/process-per-session"
			if shared {
				name = c.row + "/shared"
			}
			t.Run(name, func(t *testing.T) {
				r, srv := c.rig(t, c.row)
				srv.SetFallback(fakes.TextReply(fakes.Usage{Input: 100, Output: 5}, "first ", "chunk"))
				o := r.options()
				h, err := app.NewHost(o, app.HostOptions{SessionsPerProcess: n})
				require.NoError(t, err)
				sessions := make([]*app.Session, n)
				firsts := make([]time.Duration, n)
				one := func(i int) {
					var once sync.Once
					began := time.Now()
					got := make(chan struct{})
					so := o
					so.OnAgentText = func(_, _ string) { once.Do(func() { firsts[i] = time.Since(began); close(got) }) }
					ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
					defer cancel()
					var s *app.Session
					if shared {
						s, err = h.Start(ctx, so)
					} else {
						s, err = app.Start(ctx, so)
					}
					require.NoError(t, err)
					sessions[i] = s
					res := s.Turn(ctx, fmt.Sprintf("question %d", i))
					require.Nil(t, res.Err)
				}
				// The first session starts the shared process (cold); the
				// rest are asked for one after another.
				for i := range n {
					one(i)
				}
				pids := map[int]bool{}
				for _, s := range sessions {
					pids[s.PID()] = true
				}
				rss := 0
				for pid := range pids {
					for _, m := range proctest.GroupMembers(pid) {
						rss += rssKiB(m)
					}
				}
				var warm time.Duration
				for _, d := range firsts[1:] {
					warm += d
				}
				if n > 1 {
					warm /= time.Duration(n - 1)
				}
				t.Logf("DENSITY %s sessions=%d processes=%d rss_per_session=%.1fMiB first_chunk_first=%s first_chunk_later_mean=%s",
					name, n, len(pids), float64(rss)/1024/float64(n), firsts[0].Round(time.Millisecond), warm.Round(time.Millisecond))
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				for _, s := range sessions {
					_ = s.Stop(ctx)
				}
				require.NoError(t, h.Close(ctx))
			})
		}
	}
}

// rssKiB is a process's resident set in KiB, 0 when unreadable.
func rssKiB(pid int) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			v, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			return v
		}
	}
	return 0
}
