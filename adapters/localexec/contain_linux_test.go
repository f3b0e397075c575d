//go:build linux

package localexec

import (
	"errors"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// startHelper starts the test binary as the hostile runtime mode through
// l and returns it with the directory its processes announce themselves
// in. Cleanups tear it down and then kill whatever of it is left.
func startHelper(t *testing.T, l *Launcher, mode string, env ...string) (ports.Process, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	env = append([]string{helperModeEnv + "=" + mode, helperDirEnv + "=" + dir}, env...)
	p := launchWith(t, l, ports.LaunchRequest{Command: []string{exe}}, env, true)
	// Registered after the teardown, so it runs first: whatever escaped
	// the teardown under test is gone before the teardown's own checks.
	t.Cleanup(func() { killHelpers(t, dir) })
	return p, dir
}

// waitReady waits until exactly n helpers have announced themselves and
// returns them with their start times.
func waitReady(t *testing.T, dir string, n int) []helperProc {
	t.Helper()
	deadline := time.Now().Add(bound)
	for {
		procs, err := readyHelpers(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(procs) > n {
			t.Fatalf("%d helpers ready, want %d: %v", len(procs), n, procs)
		}
		if len(procs) == n {
			for i := range procs {
				st, ok := readProcStat(procs[i].pid)
				if !ok || st.gone() {
					t.Fatalf("helper %v is not running", procs[i])
				}
				procs[i].start = st.start
			}
			return procs
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d helpers ready within %s: %v", len(procs), n, bound, procs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// aliveSame reports whether h is still running (a zombie is not).
func aliveSame(h helperProc) bool {
	st, ok := readProcStat(h.pid)
	return ok && st.start == h.start && !st.gone()
}

// killHelpers SIGKILLs every process whose environment names dir and
// reaps those that are zombie children of the test, until none is left.
func killHelpers(t *testing.T, dir string) {
	t.Helper()
	entry := helperDirEnv + "=" + dir
	deadline := time.Now().Add(bound)
	for {
		var left []int
		entries, err := os.ReadDir("/proc")
		if err != nil {
			t.Errorf("read /proc: %v", err)
			return
		}
		for _, e := range entries {
			st, ok := procEntry(e.Name())
			if !ok {
				continue
			}
			if st.gone() {
				if st.ppid == os.Getpid() && hasHelperStart(dir, st) {
					var ws syscall.WaitStatus
					_, _ = syscall.Wait4(st.pid, &ws, syscall.WNOHANG, nil)
				}
				continue
			}
			if hasEnvEntry(st.pid, entry) {
				left = append(left, st.pid)
				_ = syscall.Kill(st.pid, syscall.SIGKILL)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("helpers %v still running after %s", left, bound)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// procEntry reads the stat of a /proc directory entry named by a PID.
func procEntry(name string) (procStat, bool) {
	st, err := os.ReadFile("/proc/" + name + "/stat")
	if err != nil {
		return procStat{}, false
	}
	return parseProcStat(st)
}

// hasHelperStart reports whether the zombie st is a helper announced in
// dir (same PID and a start time no earlier than the directory's).
func hasHelperStart(dir string, st procStat) bool {
	procs, err := readyHelpers(dir)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(procs, func(h helperProc) bool { return h.pid == st.pid })
}

// inEscapedSubtree reports whether tree node role ("node<i>") or one of
// its ancestors called setsid (i ≡ 2 mod 3).
func inEscapedSubtree(role string) bool {
	i := 0
	for _, c := range strings.TrimPrefix(role, "node") {
		i = i*10 + int(c-'0')
	}
	for ; i > 0; i = (i - 1) / 2 {
		if i%3 == 2 {
			return true
		}
	}
	return false
}

func TestContainedTeardown(t *testing.T) {
	tree30 := helperSizeEnv + "=30"
	leaderRole := func(role string) bool { return role == "leader" || role == "node0" }
	tests := []struct {
		name    string
		mode    string
		env     []string
		ready   int
		contain bool
		// leavesGroup: some helper is no longer in the group the leader
		// was started in once all are ready.
		leavesGroup bool
		// escapes reports the roles that outlive teardown without
		// containment.
		escapes    func(role string) bool
		wantLeader string // the signal that ends the leader
	}{
		{name: "leader setsid", mode: modeLeaderSetsid, ready: 2, contain: true, wantLeader: "terminated"},
		{name: "leader setsid, uncontained", mode: modeLeaderSetsid, ready: 2, wantLeader: "terminated"},
		{name: "leader joins parent group", mode: modeLeaderJoinsParent, ready: 2, contain: true,
			leavesGroup: true, wantLeader: "terminated"},
		{name: "leader joins parent group, uncontained", mode: modeLeaderJoinsParent, ready: 2,
			leavesGroup: true, escapes: func(r string) bool { return r == "sleeper" }, wantLeader: "terminated"},
		{name: "double fork and setsid", mode: modeDoubleFork, ready: 2, contain: true,
			leavesGroup: true, wantLeader: "terminated"},
		{name: "double fork and setsid, uncontained", mode: modeDoubleFork, ready: 2,
			leavesGroup: true, escapes: func(r string) bool { return r == "grandchild" }, wantLeader: "terminated"},
		{name: "30-process tree ignoring SIGTERM", mode: modeTree, env: []string{tree30}, ready: 30, contain: true,
			leavesGroup: true, wantLeader: "killed"},
		{name: "30-process tree ignoring SIGTERM, uncontained", mode: modeTree, env: []string{tree30}, ready: 30,
			leavesGroup: true, escapes: inEscapedSubtree, wantLeader: "killed"},
	}
	for _, tt := range tests {
		for _, scanTable := range []bool{false, true} {
			if scanTable && !tt.contain {
				continue
			}
			name := tt.name
			if scanTable {
				name += ", whole-table scan"
			}
			t.Run(name, func(t *testing.T) {
				h := &captureHandler{}
				l := New(Options{Contain: tt.contain, Logger: slog.New(h)})
				l.scanTable = scanTable
				p, dir := startHelper(t, l, tt.mode, tt.env...)
				procs := waitReady(t, dir, tt.ready)
				pgid := p.Identity().PID
				outside := 0
				for _, hp := range procs {
					st, _ := readProcStat(hp.pid)
					if st.pgrp != pgid {
						outside++
					}
					if leaderRole(hp.role) && hp.pid != p.Identity().PID {
						t.Fatalf("leader announced as %v, started as %d", hp, p.Identity().PID)
					}
				}
				if (outside > 0) != tt.leavesGroup {
					t.Fatalf("%d helpers outside group %d; want some: %t", outside, pgid, tt.leavesGroup)
				}

				if err := p.Terminate(); err != nil {
					t.Fatalf("Terminate: %v", err)
				}
				_ = p.Stdin().Close()
				if tt.wantLeader == "terminated" {
					// As teardown does: wait for the exit before forcing it.
					waitExited(t, p)
				}
				if err := p.Kill(); err != nil {
					t.Fatalf("Kill: %v", err)
				}
				waitExited(t, p)
				if got := p.Exit(); got.Signal != tt.wantLeader {
					t.Errorf("leader ended %+v, want signal %q", got, tt.wantLeader)
				}
				for _, hp := range procs {
					escaped := !tt.contain && tt.escapes != nil && tt.escapes(hp.role)
					if alive := aliveSame(hp); alive != escaped {
						t.Errorf("after Kill helper %v alive: %t, want %t", hp, alive, escaped)
					}
					if !tt.contain {
						continue
					}
					// What containment killed and was reparented here is reaped.
					if st, ok := readProcStat(hp.pid); ok && st.start == hp.start && st.ppid == os.Getpid() &&
						hp.pid != p.Identity().PID {
						t.Errorf("helper %v left as an unreaped child in state %c", hp, st.state)
					}
				}
				for _, rec := range h.records() {
					if rec.Level >= slog.LevelWarn {
						t.Errorf("unexpected warning %q %v", rec.Message, attrs(rec))
					}
				}
			})
		}
	}
}

func TestKillReportsSurvivors(t *testing.T) {
	var spared atomic.Int64
	h := &captureHandler{}
	l := New(Options{Contain: true, Logger: slog.New(h)})
	l.killWindow = 100 * time.Millisecond
	l.resendInterval = 10 * time.Millisecond
	// The spared process stands in for one that cannot be killed.
	l.spare = func(pid int) bool { return int64(pid) == spared.Load() }
	p, dir := startHelper(t, l, modeDoubleFork)
	procs := waitReady(t, dir, 2)
	i := slices.IndexFunc(procs, func(h helperProc) bool { return h.role == "grandchild" })
	if i < 0 {
		t.Fatalf("no grandchild among %v", procs)
	}
	g := procs[i]
	spared.Store(int64(g.pid))
	// Let the cleanup's teardown kill it.
	t.Cleanup(func() { spared.Store(0) })
	st, _ := readProcStat(g.pid)

	err := p.Kill()
	var se *domain.SurvivorsError
	if !errors.As(err, &se) {
		t.Fatalf("Kill = %v (%T), want a *domain.SurvivorsError", err, err)
	}
	want := []domain.Survivor{{PID: g.pid, Name: st.comm}}
	if !slices.Equal(se.Survivors, want) {
		t.Fatalf("survivors %+v, want %+v", se.Survivors, want)
	}
	if msg := se.Error(); !strings.Contains(msg, " ("+st.comm+")") {
		t.Errorf("error %q does not name the survivor", msg)
	}
	if !aliveSame(g) {
		t.Fatalf("the spared grandchild died")
	}
	waitExited(t, p) // the leader was killed all the same

	var warns []slog.Record
	for _, rec := range h.records() {
		if rec.Level >= slog.LevelWarn {
			warns = append(warns, rec)
		}
	}
	if len(warns) != 1 || warns[0].Message != "agent runtime processes survived the force kill" {
		t.Fatalf("warnings %v, want exactly the survivors record", warns)
	}
	a := attrs(warns[0])
	snake := regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	for k := range a {
		if !snake.MatchString(k) {
			t.Errorf("log key %q is not snake_case", k)
		}
	}
	if got, ok := a["survivor_pids"].([]int); !ok || !slices.Equal(got, []int{g.pid}) {
		t.Errorf("survivor_pids = %#v", a["survivor_pids"])
	}
	if got, ok := a["survivor_names"].([]string); !ok || !slices.Equal(got, []string{st.comm}) {
		t.Errorf("survivor_names = %#v", a["survivor_names"])
	}
	if a["pid"] != int64(p.Identity().PID) || a["pgid"] != int64(p.Identity().PID) || a["contained"] != true {
		t.Errorf("attrs %v", a)
	}
}

func TestContainTag(t *testing.T) {
	const callerValue = "set by the caller"
	tests := []struct {
		contain bool
		// want checks the tag the runtime sees.
		want func(string) bool
	}{
		{false, func(v string) bool { return v == callerValue }},
		{true, func(v string) bool { return len(v) >= 20 && v != callerValue }},
	}
	for _, tt := range tests {
		t.Run(map[bool]string{false: "uncontained", true: "contained"}[tt.contain], func(t *testing.T) {
			p := launchWith(t, New(Options{Contain: tt.contain}),
				ports.LaunchRequest{Command: []string{"/bin/sh", "-c", "env"}},
				[]string{treeTagVar + "=" + callerValue}, true)
			var values []string
			for line := range strings.SplitSeq(readAll(t, p), "\n") {
				if v, ok := strings.CutPrefix(line, treeTagVar+"="); ok {
					values = append(values, v)
				}
			}
			if len(values) != 1 || !tt.want(values[0]) {
				t.Fatalf("runtime saw %s values %q", treeTagVar, values)
			}
		})
	}
}
