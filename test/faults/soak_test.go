//go:build unix

package faults

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acpdrive/acpdrive/adapters/sysclock"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
)

// TestSoak runs 1,000 start/turn/stop cycles on the reference agent and
// checks that goroutines, descriptors, memory and child processes come
// back to where they were. It runs alone (not in parallel) so that the
// counts are this test's own.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak: not under -short")
	}
	cfg := domain.DefaultSessionSettings()
	cfg.Command = []string{testbin.Path(t), "agent"}
	cfg.ReadTimeout = 2 * time.Second
	cfg.StopGrace = 2 * time.Second
	dir := t.TempDir()
	cycle := func(i int) {
		s, err := app.Start(context.Background(), app.Options{Settings: cfg, Workspace: dir, Launcher: launcher, Clock: sysclock.Clock{}})
		if err != nil {
			t.Fatalf("cycle %d: start: %v", i, err)
		}
		if res := s.Turn(context.Background(), "hello"); res.Outcome != domain.OutcomeCompleted {
			t.Fatalf("cycle %d: turn %s %v", i, res.Outcome, res.Err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = s.Stop(ctx)
		cancel()
		if err != nil {
			t.Fatalf("cycle %d: stop: %v", i, err)
		}
	}
	for i := range 5 { // warm up: the subreaper, pools, the first exec
		cycle(i)
	}
	settle()
	goroutines, fds, rss, zombies := runtime.NumGoroutine(), countFDs(), rssKiB(), zombieChildren()
	begin := time.Now()
	const cycles = 1000
	for i := range cycles {
		cycle(i)
	}
	t.Logf("%d cycles in %s", cycles, time.Since(begin))
	deadline := time.Now().Add(5 * time.Second)
	for {
		settle()
		g, f, z := runtime.NumGoroutine(), countFDs(), zombieChildren()
		if (g <= goroutines+3 && f <= fds+3 && z <= zombies) || time.Now().After(deadline) {
			if g > goroutines+3 {
				t.Errorf("goroutines %d → %d", goroutines, g)
			}
			if f > fds+3 {
				t.Errorf("open descriptors %d → %d", fds, f)
			}
			if z > zombies {
				t.Errorf("zombie children %d → %d", zombies, z)
			}
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if now := rssKiB(); now > rss+100<<10 {
		t.Errorf("RSS %d KiB → %d KiB", rss, now)
	}
}

func settle() {
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
}

func countFDs() int {
	entries, _ := os.ReadDir("/proc/self/fd")
	return len(entries)
}

func rssKiB() int {
	data, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return n
		}
	}
	return 0
}

// zombieChildren counts this process's children in state Z.
func zombieChildren() int {
	self := strconv.Itoa(os.Getpid())
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 2 && f[0] == "Z" && f[1] == self {
			n++
		}
	}
	return n
}
