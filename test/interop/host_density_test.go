//go:build interop

package interop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/internal/testsupport/proctest"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// BenchmarkHostDensity measures what a session costs on today's Claude
// adapter, codex-acp and Gemini CLI against the fake models, with sessions
// sharing one runtime process (app.Host) and with a process per session
// (app.Start), side by side in one run, at 1, 10 and 50 sessions
// (docs/behaviour.md#runtime-host; the figures and the command are in
// BENCHMARKS.md, "Runtime host density"). Each sub-benchmark
// (runtime/sessions=N) runs both modes once per op, in turn, each on a
// machine where the other mode's processes are gone:
//
//  1. cold: one session is asked for with no runtime process running; its
//     first turn is sent as soon as the session is there;
//  2. later: the other N-1 sessions are asked for all at once (concurrent
//     starts, each sending its first turn as soon as it is there);
//  3. memory: once every session's first turn ended, the resident set
//     (VmRSS) and proportional set (Pss) of the runtime processes and all
//     their descendants, summed, divided by the sessions;
//  4. next: one more session is asked for alone while the N are live and
//     idle (on the warm process when shared; a cold start otherwise).
//
// A session's time is from asking for it (Host.Start or app.Start) to its
// first streamed agent_message_chunk. Nothing of the figures is asserted.
// A runtime that cannot share its process (it does not advertise
// session/close) reports the process-per-session figures only and logs why.
// At 50 sessions, the sessions that fit the machine's available memory are
// measured (ACPDRIVE_DENSITY_RESERVE_MIB is kept free, default 4096) and
// the log says so.
func BenchmarkHostDensity(b *testing.B) {
	rows := []struct {
		row string
		rig func(testing.TB, string) (*rig, *fakes.Server)
	}{
		{"claude-current", claudeRigOf},
		{"codex-current", codexRigOf},
		{"gemini", func(t testing.TB, _ string) (*rig, *fakes.Server) { return geminiRig(t, true) }},
	}
	for _, c := range rows {
		for _, n := range []int{1, 10, 50} {
			b.Run(fmt.Sprintf("%s/sessions=%d", c.row, n), func(b *testing.B) {
				r, srv := c.rig(b, c.row)
				srv.SetFallback(fakes.TextReply(fakes.Usage{Input: 100, Output: 5}, "first ", "chunk"))
				// Fifty starts at once on two cores take their time: the
				// bounds are the benchmark's, not what is measured.
				r.readTimeout = 10 * time.Minute
				b.ReportMetric(0, "ns/op")
				var shared, own []densityRun
				for range b.N {
					d := newDensity(b, r)
					fit := d.fit(n)
					if fit < n {
						b.Logf("%s: %d sessions (+1 next) do not fit the available memory; measuring %d", c.row, n, fit)
					}
					if s, err := d.run(fit, true); err == nil {
						shared = append(shared, s)
					} else if errors.Is(err, errHostRefused) {
						b.Logf("%s: shared process refused, process per session only: %v", c.row, err)
					} else {
						b.Fatalf("%s shared: %v", c.row, err)
					}
					o, err := d.run(fit, false)
					if err != nil {
						b.Fatalf("%s process per session: %v", c.row, err)
					}
					own = append(own, o)
				}
				report(b, "shared", shared)
				report(b, "own", own)
				if len(shared) > 0 {
					s, o := mean(shared), mean(own)
					b.ReportMetric(100*s.rssPerSession()/o.rssPerSession(), "shared/own-RSS-%")
					if s.laterMean() > 0 {
						b.ReportMetric(float64(s.cold)/float64(s.laterMean()), "shared-cold/later-x")
					}
					b.ReportMetric(float64(s.cold)/float64(s.next), "shared-cold/next-x")
				}
			})
		}
	}
}

// errHostRefused marks a runtime that cannot share its process.
var errHostRefused = errors.New("the host refused to share the process")

// densityRun is what one mode measured.
type densityRun struct {
	sessions  int
	procs     int   // runtime processes (distinct agent pids)
	treeProcs int   // processes in their trees
	rssKiB    int64 // summed over the trees
	pssKiB    int64
	rootKiB   int64           // the runtime processes' own RSS, summed
	cold      time.Duration   // first chunk of the first session
	later     []time.Duration // first chunks of the N-1 concurrent ones
	next      time.Duration   // first chunk of the one more, alone
	// When Start returned (the session created), for the same sessions.
	coldReady, nextReady time.Duration
	laterReady           []time.Duration
}

func (d densityRun) rssPerSession() float64 { return float64(d.rssKiB) / 1024 / float64(d.sessions) }
func (d densityRun) pssPerSession() float64 { return float64(d.pssKiB) / 1024 / float64(d.sessions) }

func (d densityRun) laterMean() time.Duration { return meanOf(d.later) }

func meanOf(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	var sum time.Duration
	for _, l := range ds {
		sum += l
	}
	return sum / time.Duration(len(ds))
}

// mean averages the runs of several ops (one op: the run itself).
func mean(runs []densityRun) densityRun {
	if len(runs) == 1 {
		return runs[0]
	}
	var m densityRun
	for _, r := range runs {
		m.sessions += r.sessions
		m.procs += r.procs
		m.treeProcs += r.treeProcs
		m.rssKiB += r.rssKiB
		m.pssKiB += r.pssKiB
		m.rootKiB += r.rootKiB
		m.cold += r.cold
		m.next += r.next
		m.later = append(m.later, r.later...)
		m.coldReady += r.coldReady
		m.nextReady += r.nextReady
		m.laterReady = append(m.laterReady, r.laterReady...)
	}
	k := len(runs)
	m.sessions /= k
	m.procs /= k
	m.treeProcs /= k
	m.rssKiB /= int64(k)
	m.pssKiB /= int64(k)
	m.rootKiB /= int64(k)
	m.cold /= time.Duration(k)
	m.next /= time.Duration(k)
	m.coldReady /= time.Duration(k)
	m.nextReady /= time.Duration(k)
	return m
}

// report writes one mode's metrics, their units prefixed with the mode.
func report(b *testing.B, mode string, runs []densityRun) {
	if len(runs) == 0 {
		return
	}
	m := mean(runs)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(float64(m.sessions), mode+"-sessions")
	b.ReportMetric(float64(m.procs), mode+"-runtime-procs")
	b.ReportMetric(float64(m.treeProcs), mode+"-tree-procs")
	b.ReportMetric(m.rssPerSession(), mode+"-RSS-MiB/session")
	b.ReportMetric(m.pssPerSession(), mode+"-PSS-MiB/session")
	b.ReportMetric(ms(m.cold), mode+"-cold-first-chunk-ms")
	b.ReportMetric(ms(m.coldReady), mode+"-cold-ready-ms")
	if len(m.later) > 0 {
		b.ReportMetric(ms(m.laterMean()), mode+"-later-first-chunk-mean-ms")
		b.ReportMetric(ms(slices.Max(m.later)), mode+"-later-first-chunk-max-ms")
		b.ReportMetric(ms(meanOf(m.laterReady)), mode+"-later-ready-mean-ms")
	}
	b.ReportMetric(ms(m.next), mode+"-next-first-chunk-ms")
	b.ReportMetric(ms(m.nextReady), mode+"-next-ready-ms")
}

// density runs the measurement of one runtime on its rig.
type density struct {
	b *testing.B
	r *rig
	o app.Options
}

func newDensity(b *testing.B, r *rig) *density {
	o := r.options()
	o.Settings.TurnTimeout = 10 * time.Minute
	return &density{b: b, r: r, o: o}
}

// fit is how many of n sessions (plus the next one) the machine's
// available memory holds at the cost of one cold session (a throwaway
// session, which also leaves the runtime's files in the page cache so
// neither mode's cold start pays the disk).
func (d *density) fit(n int) int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s, err := app.Start(ctx, d.o)
	if err != nil {
		d.b.Fatalf("priming session: %v", err)
	}
	if res := s.Turn(ctx, "priming"); res.Err != nil {
		d.b.Fatalf("priming turn: %v", res.Err)
	}
	var cost int64
	for _, p := range processTree([]int{s.PID()}) {
		cost += p.rssKiB
	}
	pid := s.PID()
	if err := s.Stop(ctx); err != nil {
		d.b.Fatalf("priming stop: %v", err)
	}
	proctest.WaitGroupEmpty(d.b, pid, 10*time.Second)
	reserve := int64(4096)
	if v, err := strconv.ParseInt(os.Getenv("ACPDRIVE_DENSITY_RESERVE_MIB"), 10, 64); err == nil {
		reserve = v
	}
	room := memAvailableKiB() - reserve*1024
	if cost <= 0 || int64(n+1)*cost <= room {
		return n
	}
	return max(1, int(room/cost)-1)
}

// run measures n sessions in one mode, then stops them all and waits for
// their processes to be gone.
func (d *density) run(n int, shared bool) (densityRun, error) {
	var h *app.Host
	if shared {
		var err error
		if h, err = app.NewHost(d.o, app.HostOptions{SessionsPerProcess: n + 1}); err != nil {
			return densityRun{}, err
		}
	}
	var mu sync.Mutex
	var sessions []*app.Session
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		pids := map[int]bool{}
		var wg sync.WaitGroup
		for _, s := range sessions {
			pids[s.PID()] = true
			wg.Add(1)
			go func() { defer wg.Done(); _ = s.Stop(ctx) }()
		}
		wg.Wait()
		if h != nil {
			_ = h.Close(ctx)
		}
		for pid := range pids {
			proctest.WaitGroupEmpty(d.b, pid, 30*time.Second)
		}
	}()
	// one asks for a session, sends its first turn and returns the times
	// from the ask to the session's creation and to its first streamed
	// chunk.
	one := func(i int) (ready, firstChunk time.Duration, err error) {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		so := d.o
		first := make(chan time.Duration, 1)
		var once sync.Once
		began := time.Now()
		so.OnAgentText = func(_, _ string) { once.Do(func() { first <- time.Since(began) }) }
		var s *app.Session
		if shared {
			s, err = h.Start(ctx, so)
		} else {
			s, err = app.Start(ctx, so)
		}
		ready = time.Since(began)
		if err != nil {
			if shared && strings.Contains(err.Error(), app.MsgHostNeedsClose) {
				return 0, 0, fmt.Errorf("%w: %v", errHostRefused, err)
			}
			return 0, 0, fmt.Errorf("session %d: %w", i, err)
		}
		mu.Lock()
		sessions = append(sessions, s)
		mu.Unlock()
		if res := s.Turn(ctx, fmt.Sprintf("question %d", i)); res.Err != nil {
			return 0, 0, fmt.Errorf("session %d turn: %w", i, res.Err)
		}
		select {
		case f := <-first:
			return ready, f, nil
		default:
			return 0, 0, fmt.Errorf("session %d: no chunk streamed", i)
		}
	}
	var out densityRun
	var err error
	if out.coldReady, out.cold, err = one(0); err != nil {
		return out, err
	}
	out.later = make([]time.Duration, n-1)
	out.laterReady = make([]time.Duration, n-1)
	errs := make([]error, n-1)
	var wg sync.WaitGroup
	for i := range n - 1 {
		wg.Add(1)
		go func() { defer wg.Done(); out.laterReady[i], out.later[i], errs[i] = one(i + 1) }()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return out, err
	}
	var roots []int
	for _, s := range sessions {
		if !slices.Contains(roots, s.PID()) {
			roots = append(roots, s.PID())
		}
	}
	tree := settledTree(roots)
	out.sessions, out.procs, out.treeProcs = n, len(roots), len(tree)
	for _, p := range tree {
		out.rssKiB += p.rssKiB
		out.pssKiB += p.pssKiB
		if slices.Contains(roots, p.pid) {
			out.rootKiB += p.rssKiB
		}
	}
	mode := "process per session"
	if shared {
		mode = "shared"
	}
	note("%s %s sessions=%d runtime_procs=%d tree_procs=%d rss=%.1fMiB (runtime processes %.1fMiB, descendants %.1fMiB) pss=%.1fMiB",
		d.b.Name(), mode, n, out.procs, out.treeProcs, kib(out.rssKiB), kib(out.rootKiB), kib(out.rssKiB-out.rootKiB), kib(out.pssKiB))
	if shared || n == 1 {
		note("%s %s process tree at %d sessions:\n%s", d.b.Name(), mode, n, describeTree(tree, roots))
	}
	if out.nextReady, out.next, err = one(n); err != nil {
		return out, err
	}
	return out, nil
}

// note prints a line of the measurement's own record to standard output,
// whole (a benchmark's log keeps only its first ten lines), each line
// prefixed "density: " (benchstat and benchplot read only the
// Benchmark lines).
func note(format string, args ...any) {
	text := fmt.Sprintf(format, args...)
	fmt.Println("density: " + strings.ReplaceAll(text, "\n", "\ndensity: "))
}

func kib(k int64) float64 { return float64(k) / 1024 }

// settledSamples is how many looks in a row, a quarter of a second apart,
// must find the same processes for a tree to count as settled; maxSamples
// bounds the looks.
const (
	settledSamples = 8
	maxSamples     = 240
)

// settledTree is the process trees of roots once settledSamples looks in
// a row found the same processes (at most maxSamples looks): what a
// runtime starts for a moment after a turn (Claude's `claude auth status`
// probe, codex's shell snapshot) is not a session's standing cost.
func settledTree(roots []int) []proc {
	pids := func(t []proc) []int {
		out := make([]int, len(t))
		for i, p := range t {
			out[i] = p.pid
		}
		return out
	}
	tree := processTree(roots)
	same := 0
	for range maxSamples {
		if same >= settledSamples {
			break
		}
		time.Sleep(250 * time.Millisecond)
		next := processTree(roots)
		if slices.Equal(pids(next), pids(tree)) {
			same++
		} else {
			same = 0
		}
		tree = next
	}
	return tree
}

// proc is one process of a runtime's tree.
type proc struct {
	pid, ppid int
	name      string // executable base name, and the script's for node
	rssKiB    int64
	pssKiB    int64
}

// processTree is every live process whose ancestor, or process group, is
// one of roots (a descendant that left the group, or a group member whose
// parent went away, both count).
func processTree(roots []int) []proc {
	all := proctest.Live()
	in := func(pid int) bool {
		for seen := 0; pid > 1 && seen < 64; seen++ {
			if slices.Contains(roots, pid) || slices.Contains(roots, all[pid].PGRP) {
				return true
			}
			pid = all[pid].PPID
		}
		return false
	}
	var out []proc
	for pid, st := range all {
		if in(pid) {
			out = append(out, proc{pid: pid, ppid: st.PPID, name: procName(pid),
				rssKiB: statusKiB(pid, "status", "VmRSS:"), pssKiB: statusKiB(pid, "smaps_rollup", "Pss:")})
		}
	}
	slices.SortFunc(out, func(a, b proc) int { return a.pid - b.pid })
	return out
}

// procName is a process's executable base name and, when that is node,
// its script's base name: no path of the machine.
func procName(pid int) string {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	args := strings.Split(strings.TrimRight(string(data), "\x00"), "\x00")
	if len(args) == 0 || args[0] == "" {
		return "?"
	}
	name := filepath.Base(args[0])
	if name == "node" && len(args) > 1 {
		name += " " + filepath.Base(args[1])
	}
	return name
}

// statusKiB reads a "Key: N kB" line of /proc/pid/<file>; 0 when unreadable.
func statusKiB(pid int, file, key string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, file))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, key); ok {
			v, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return v
		}
	}
	return 0
}

// memAvailableKiB is the machine's MemAvailable.
func memAvailableKiB() int64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			v, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return v
		}
	}
	return 0
}

// describeTree renders a tree as `pid ppid RSS name` lines, children
// indented under their parent; a run of siblings of one name and similar
// size is folded into one line with its count, mean and range.
func describeTree(tree []proc, roots []int) string {
	kids := map[int][]proc{}
	byPID := map[int]bool{}
	for _, p := range tree {
		byPID[p.pid] = true
	}
	var tops []proc
	for _, p := range tree {
		if byPID[p.ppid] {
			kids[p.ppid] = append(kids[p.ppid], p)
		} else {
			tops = append(tops, p)
		}
	}
	var sb strings.Builder
	var walk func(ps []proc, depth int)
	walk = func(ps []proc, depth int) {
		groups := map[string][]proc{}
		var order []string
		for _, p := range ps {
			if _, ok := groups[p.name]; !ok {
				order = append(order, p.name)
			}
			groups[p.name] = append(groups[p.name], p)
		}
		for _, name := range order {
			g := groups[name]
			pad := strings.Repeat("  ", depth)
			if len(g) > 3 {
				var sum, lo, hi int64 = 0, g[0].rssKiB, g[0].rssKiB
				for _, p := range g {
					sum += p.rssKiB
					lo, hi = min(lo, p.rssKiB), max(hi, p.rssKiB)
				}
				fmt.Fprintf(&sb, "%s%d x %s: RSS %.1f MiB each on average [%.1f–%.1f], %.1f MiB in all\n",
					pad, len(g), name, kib(sum)/float64(len(g)), kib(lo), kib(hi), kib(sum))
				var sub []proc
				for _, p := range g {
					sub = append(sub, kids[p.pid]...)
				}
				walk(sub, depth+1)
				continue
			}
			for _, p := range g {
				fmt.Fprintf(&sb, "%spid %d ppid %d RSS %.1f MiB %s\n", pad, p.pid, p.ppid, kib(p.rssKiB), p.name)
				walk(kids[p.pid], depth+1)
			}
		}
	}
	walk(tops, 0)
	return strings.TrimRight(sb.String(), "\n")
}
