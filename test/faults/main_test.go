//go:build unix

package faults

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpdrive/acpdrive/adapters/localexec"
	"github.com/acpdrive/acpdrive/adapters/sysclock"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/proctest"
	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
)

// TestMain runs the hostile runtime when re-executed as one, and otherwise
// the suite. Most scenarios wait on timers rather than the CPU, so unless
// -parallel was given the suite runs up to 8 of them at once.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "hostile" {
		hostileMain(os.Args[2], os.Args[3:])
	}
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", "8")
	}
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// Suite-wide bounds: small, so the suite is fast.
const (
	readTimeout = 400 * time.Millisecond
	stopGrace   = 500 * time.Millisecond
)

// launcher is shared, as one process shares it in production.
var launcher = localexec.New(localexec.Options{Contain: true})

// tolerance is how long a wait of bound may take on a loaded machine. It is
// a ceiling that means "did not hang" (generous: a loaded 2-core machine
// has stretched a 0.5 s wait past 3 s), not a measure of the bound: a
// scenario that tells one bound from another does so by its outcome or its
// events, or by a lower bound (timers do not fire early).
func tolerance(bound time.Duration) time.Duration { return 10*bound + 30*time.Second }

// within fails the test when elapsed exceeds bound's tolerance: the wait
// did not hang.
func within(t *testing.T, what string, elapsed, bound time.Duration) {
	t.Helper()
	if elapsed > tolerance(bound) {
		t.Errorf("%s took %s; bound %s (tolerance %s)", what, elapsed, bound, tolerance(bound))
	}
}

// rig is one hostile runtime driven through the library.
type rig struct {
	t    *testing.T
	dir  string
	opts app.Options
	sess *app.Session

	mu      sync.Mutex
	events  []domain.Event // the first maxKept
	counts  map[string]int // by type + "|" + message
	pid     int
	stopped bool
}

const maxKept = 2000

func hostileCommand(t testing.TB, behaviour string, args ...string) []string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{exe, "hostile", behaviour}, args...)
}

func newRig(t *testing.T, behaviour string, args ...string) *rig {
	r := &rig{t: t, dir: t.TempDir(), counts: map[string]int{}}
	cfg := domain.DefaultSessionSettings()
	cfg.Command = hostileCommand(t, behaviour, args...)
	cfg.ReadTimeout = readTimeout
	cfg.StopGrace = stopGrace
	cfg.StallTimeout = 0
	cfg.TurnTimeout = 60 * time.Second
	r.opts = app.Options{
		Settings:  cfg,
		Workspace: r.dir,
		Launcher:  launcher,
		Clock:     sysclock.Clock{},
		OnEvent:   r.record,
	}
	t.Cleanup(r.finish)
	return r
}

func (r *rig) record(ev domain.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.events) < maxKept {
		r.events = append(r.events, ev)
	}
	r.counts[string(ev.Type)+"|"+ev.Message]++
	if ev.AgentPID != 0 {
		r.pid = ev.AgentPID
	}
}

// count is how many events of typ carried msg.
func (r *rig) count(typ domain.EventType, msg string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.counts[string(typ)+"|"+msg]
}

func (r *rig) kept() []domain.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]domain.Event(nil), r.events...)
}

// start starts the session and reports how long it took.
func (r *rig) start(ctx context.Context) (time.Duration, error) {
	begin := time.Now()
	s, err := app.Start(ctx, r.opts)
	elapsed := time.Since(begin)
	if s != nil {
		r.sess = s
		r.mu.Lock()
		r.pid = s.PID()
		r.mu.Unlock()
	}
	return elapsed, err
}

func (r *rig) mustStart() {
	r.t.Helper()
	if _, err := r.start(context.Background()); err != nil {
		r.t.Fatalf("start: %v", err)
	}
}

func (r *rig) turn(ctx context.Context, prompt string) (domain.TurnResult, time.Duration) {
	begin := time.Now()
	res := r.sess.Turn(ctx, prompt)
	return res, time.Since(begin)
}

func (r *rig) mustComplete(prompt string) {
	r.t.Helper()
	res, _ := r.turn(context.Background(), prompt)
	if res.Outcome != domain.OutcomeCompleted {
		r.t.Fatalf("turn %q: %s %v; want turn_completed", prompt, res.Outcome, res.Err)
	}
}

// stop stops the session with a ctx bounded by within.
func (r *rig) stop(bound time.Duration) (time.Duration, error) {
	if r.sess == nil || r.stopped {
		return 0, nil
	}
	r.stopped = true
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	begin := time.Now()
	err := r.sess.Stop(ctx)
	return time.Since(begin), err
}

// finish stops what is still running and checks that nothing of the
// runtime's tree is left: its process group, its leader, and every process
// it recorded.
func (r *rig) finish() {
	if r.sess != nil && !r.stopped {
		if _, err := r.stop(stopGrace + 10*time.Second); err != nil && !isSurvivors(err) {
			r.t.Errorf("stop: %v", err)
		}
	}
	r.mu.Lock()
	pid := r.pid
	r.mu.Unlock()
	pids := readPIDs(r.dir)
	if pid != 0 {
		proctest.WaitGroupEmpty(r.t, pid, 5*time.Second)
		pids = append(pids, pid)
	}
	waitGone(r.t, pids, 5*time.Second)
}

func isSurvivors(err error) bool {
	var s *domain.SurvivorsError
	return errors.As(err, &s)
}

// readPIDs reads the pids file a hostile runtime leaves in dir.
func readPIDs(dir string) []int {
	f, err := os.Open(filepath.Join(dir, "pids"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var pids []int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if pid, err := strconv.Atoi(strings.TrimSpace(sc.Text())); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitGone fails the test when any of pids is still alive (zombies
// excepted) after within.
func waitGone(t testing.TB, pids []int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var alive []int
		for _, pid := range pids {
			if proctest.Alive(pid) {
				alive = append(alive, pid)
			}
		}
		if len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%d process(es) of the runtime survived: %v", len(alive), alive)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// report reads the hostile runtime's report file: key → values in order.
func (r *rig) report() map[string][]string {
	out := map[string][]string{}
	data, err := os.ReadFile(filepath.Join(r.dir, "report"))
	if err != nil {
		return out
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		k, v, _ := strings.Cut(line, " ")
		out[k] = append(out[k], v)
	}
	return out
}

// wantErr checks an error's kind and message.
func wantErr(t *testing.T, err error, kind domain.ErrorKind, msg string) {
	t.Helper()
	var ae *domain.AgentError
	if !errors.As(err, &ae) {
		t.Fatalf("error %v (%T); want a *domain.AgentError of kind %s", err, err, kind)
	}
	if ae.Kind != kind {
		t.Errorf("kind %s (message %q); want %s", ae.Kind, ae.Message, kind)
	}
	if msg != "" && ae.Message != msg {
		t.Errorf("message\n  %q\nwant\n  %q", ae.Message, msg)
	}
}

// wantResult checks a turn's outcome, kind and message.
func wantResult(t *testing.T, res domain.TurnResult, outcome domain.Outcome, kind domain.ErrorKind, msg string) {
	t.Helper()
	if res.Outcome != outcome {
		t.Errorf("outcome %s (%v); want %s", res.Outcome, res.Err, outcome)
	}
	if kind == "" {
		if res.Err != nil {
			t.Errorf("error %v; want none", res.Err)
		}
		return
	}
	if res.Err == nil {
		t.Fatalf("no error; want %s %q", kind, msg)
	}
	wantErr(t, res.Err, kind, msg)
}

// waitFor polls cond until it holds or within elapses.
func waitFor(t *testing.T, what string, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
