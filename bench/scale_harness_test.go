//go:build linux

package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/acpdrive/acpdrive/adapters/localexec"
	"github.com/acpdrive/acpdrive/adapters/sysclock"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
)

// The scale benchmarks (issue 12, "sessions at scale") run thousands of
// sessions of one process against bench/smallagent, a C agent of a few
// hundred kilobytes of RSS, built with the C compiler on first use. They
// use the launcher the CLI uses (localexec with containment).

// startWorkers bounds how many sessions start at once. Starting is
// fork/exec plus a handshake; more starters than this only queue on the
// two cores.
const startWorkers = 32

// smallAgent builds bench/smallagent once and returns its path.
var smallAgent = sync.OnceValues(func() (string, error) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		return "", fmt.Errorf("a C compiler (cc) is needed for the small agent: %w", err)
	}
	dir, err := os.MkdirTemp("", "acpdrive-smallagent-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "smallagent")
	out, err := exec.Command(cc, "-O2", "-o", bin, filepath.Join("smallagent", "smallagent.c")).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("building the small agent: %v: %s", err, out)
	}
	return bin, nil
})

// scaleEnv is what the scale benchmarks share: one launcher and one
// creation store, as one CLI process has.
type scaleEnv struct {
	agent     string
	launcher  *localexec.Launcher
	creations *app.MemoryCreations
}

func newScaleEnv(b *testing.B) *scaleEnv {
	b.Helper()
	bin, err := smallAgent()
	if err != nil {
		b.Skip(err)
	}
	return &scaleEnv{
		agent:     bin,
		launcher:  localexec.New(localexec.Options{Contain: true}),
		creations: app.NewMemoryCreations(),
	}
}

// start starts one session on the small agent.
func (e *scaleEnv) start(ctx context.Context) (*app.Session, error) {
	cfg := domain.DefaultSessionSettings()
	cfg.Command = []string{e.agent}
	return app.Start(ctx, app.Options{
		Settings:  cfg,
		Workspace: workspace,
		Launcher:  e.launcher,
		Clock:     sysclock.Clock{},
		Creations: e.creations,
	})
}

// startMany starts n sessions, startWorkers at a time, and returns those
// that started and the number of failed starts (the first error too).
func (e *scaleEnv) startMany(ctx context.Context, n int) ([]*app.Session, int, error) {
	sessions := make([]*app.Session, n)
	errs := make([]error, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(startWorkers, n) {
		wg.Go(func() {
			for i := range next {
				sessions[i], errs[i] = e.start(ctx)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	var started []*app.Session
	failed := 0
	var first error
	for i, s := range sessions {
		if errs[i] != nil {
			failed++
			if first == nil {
				first = errs[i]
			}
			continue
		}
		started = append(started, s)
	}
	return started, failed, first
}

// stopAll stops every session at once and returns the first error.
func stopAll(ctx context.Context, sessions []*app.Session) error {
	errs := make([]error, len(sessions))
	var wg sync.WaitGroup
	for i, s := range sessions {
		wg.Go(func() { errs[i] = s.Stop(ctx) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// pids returns the sessions' agent PIDs (each its process group's ID).
func pids(sessions []*app.Session) []int {
	out := make([]int, 0, len(sessions))
	for _, s := range sessions {
		out = append(out, s.PID())
	}
	return out
}

// leftover counts the processes, zombies included, that are one of pids
// or in a process group one of them led: what a teardown left behind. It
// reads the whole process table, which only the benchmark does.
func leftover(pids []int) int {
	want := make(map[int]bool, len(pids))
	for _, p := range pids {
		want[p] = true
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return -1
	}
	n := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(data, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(data[i+1:]))
		if len(f) < 3 {
			continue
		}
		pgrp, _ := strconv.Atoi(f[2])
		if want[pid] || want[pgrp] {
			n++
		}
	}
	return n
}

// procStatus reads one "Name: value kB" figure of this process's
// /proc status (pidStatus).
func procStatus(field string) int64 { return pidStatus(os.Getpid(), field) }

// openFDs counts this process's open file descriptors.
func openFDs() int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(entries)
}

// heapAfterGC is the live heap after two full collections.
func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// usage is this process's figures at one moment.
type usage struct {
	heap    uint64
	rss     int64
	threads int64
	fds     int
}

func measureUsage() usage {
	return usage{heap: heapAfterGC(), rss: procStatus("VmRSS"), threads: procStatus("Threads"), fds: openFDs()}
}

// checkLimits skips the benchmark when the process cannot hold n sessions:
// each takes up to 4 descriptors here and one process (plus its threads)
// of the user's process limit.
func checkLimits(b *testing.B, n int) {
	b.Helper()
	var nofile syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &nofile); err == nil {
		if need := uint64(4*n + 64); nofile.Cur < need {
			b.Skipf("RLIMIT_NOFILE is %d; %d sessions need about %d (ulimit -n)", nofile.Cur, n, need)
		}
	}
}

// scaleCtx is the bound of one scale benchmark.
func scaleCtx(b *testing.B) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	b.Cleanup(cancel)
	return ctx
}
