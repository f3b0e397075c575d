package app_test

import (
	"context"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/inprocess"
	"github.com/acpdrive/acpdrive/adapters/localexec"
	"github.com/acpdrive/acpdrive/adapters/sysclock"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/eventrec"
	"github.com/acpdrive/acpdrive/internal/testsupport/fakeclock"
	"github.com/acpdrive/acpdrive/internal/testsupport/proctest"
	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
	"github.com/acpdrive/acpdrive/refagent"
)

// TestMain builds the acpdrive binary on demand for the tests that need a
// real process, removes it afterwards, and fails the run when a goroutine
// leaked (goleak). The tests mostly wait on pipes and bounds rather than
// on a CPU, so unless -parallel is given, more of them run at once than
// GOMAXPROCS.
func TestMain(m *testing.M) {
	if code, ok := runHelper(); ok {
		os.Exit(code)
	}
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(max(8, runtime.GOMAXPROCS(0))))
	}
	testbin.Main(m)
}

// waitFor bounds every wait of these tests on something that should happen
// promptly; it is never the bound under test.
const waitFor = 10 * time.Second

// epoch is where fake clocks start: 12:00:30 UTC, mid-minute.
var epoch = time.Date(2026, 11, 30, 12, 0, 30, 0, time.UTC)

// harness is one session on the reference agent, in-process or as a real
// process.
type harness struct {
	t       *testing.T
	sess    *app.Session
	rec     *eventrec.Recorder
	logs    *eventrec.Log
	agentLg string
	opts    app.Options
	clock   *fakeclock.Clock // nil on the system clock
}

type option func(*app.Options)

func withReadTimeout(d time.Duration) option {
	return func(o *app.Options) { o.Settings.ReadTimeout = d }
}

func withStopGrace(d time.Duration) option {
	return func(o *app.Options) { o.Settings.StopGrace = d }
}

func withResume(id string) option { return func(o *app.Options) { o.ResumeSessionID = id } }

func withClock(c *fakeclock.Clock) option { return func(o *app.Options) { o.Clock = c } }

func withConfig(f func(*domain.SessionSettings)) option {
	return func(o *app.Options) { f(&o.Settings) }
}

// baseOptions are the options every test session starts from.
func baseOptions(t *testing.T, opts ...option) (app.Options, *eventrec.Recorder, *eventrec.Log) {
	t.Helper()
	rec := &eventrec.Recorder{}
	logs := &eventrec.Log{}
	cfg := domain.DefaultSessionSettings()
	cfg.Command = []string{"acpdrive-reference-agent"}
	cfg.ReadTimeout = 3 * time.Second
	cfg.StopGrace = 3 * time.Second
	cfg.StallTimeout = 0
	o := app.Options{
		Settings:    cfg,
		Workspace:   t.TempDir(),
		Clock:       sysclock.Clock{},
		Logger:      slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		OnEvent:     rec.Add,
		OnAgentText: rec.AddText,
	}
	for _, f := range opts {
		f(&o)
	}
	return o, rec, logs
}

// agentOptions builds the options of a session on the reference agent
// served in-process (adapters/inprocess) with args; the agent logs what it
// receives to the returned path.
func agentOptions(t *testing.T, args []string, opts ...option) (app.Options, *eventrec.Recorder, *eventrec.Log, string) {
	t.Helper()
	agentLog := filepath.Join(t.TempDir(), "agent.log")
	o, rec, logs := baseOptions(t, opts...)
	o.Launcher = inprocess.New(append([]string{"--log", agentLog}, args...)...)
	return o, rec, logs, agentLog
}

// procOptions is agentOptions for a real reference-agent process, started
// through the local launcher: for signals, process groups, and teardown of
// real processes.
func procOptions(t *testing.T, args []string, opts ...option) (app.Options, *eventrec.Recorder, *eventrec.Log, string) {
	t.Helper()
	agentLog := filepath.Join(t.TempDir(), "agent.log")
	o, rec, logs := baseOptions(t, opts...)
	o.Settings.Command = append([]string{testbin.Path(t), "agent", "--log", agentLog}, args...)
	o.Launcher = localexec.New(localexec.Options{})
	return o, rec, logs, agentLog
}

// start starts a session on the in-process reference agent; cleanup stops it.
func start(t *testing.T, args []string, opts ...option) *harness {
	t.Helper()
	o, rec, logs, agentLog := agentOptions(t, args, opts...)
	return startWith(t, o, rec, logs, agentLog)
}

// startProc starts a session on a real reference-agent process; cleanup
// stops it and checks that no member of its process group survives.
func startProc(t *testing.T, args []string, opts ...option) *harness {
	t.Helper()
	o, rec, logs, agentLog := procOptions(t, args, opts...)
	return startWith(t, o, rec, logs, agentLog)
}

// startWith starts a session with o. On a fake clock the clock is driven
// while Start waits on it (the replay's quiet period, say).
func startWith(t *testing.T, o app.Options, rec *eventrec.Recorder, logs *eventrec.Log, agentLog string) *harness {
	t.Helper()
	h := &harness{t: t, rec: rec, logs: logs, agentLg: agentLog, opts: o}
	h.clock, _ = o.Clock.(*fakeclock.Clock)
	sess, err := startDriven(h.clock, o)
	require.NoError(t, err, logs.String())
	h.sess = sess
	t.Cleanup(func() { h.stop() })
	return h
}

// startDriven runs app.Start, driving clock (when not nil) until it returns.
func startDriven(clock *fakeclock.Clock, o app.Options) (*app.Session, error) {
	type started struct {
		s   *app.Session
		err error
	}
	done := make(chan started, 1)
	go func() {
		s, err := app.Start(context.Background(), o)
		done <- started{s, err}
	}()
	var r started
	drive(clock, func() bool {
		select {
		case r = <-done:
			return true
		default:
			return false
		}
	})
	if clock == nil {
		r = <-done
	}
	return r.s, r.err
}

// drive moves clock forward in small steps while timers are pending, until
// finished reports true. With a nil clock it returns at once.
func drive(clock *fakeclock.Clock, finished func() bool) {
	if clock == nil {
		return
	}
	deadline := time.Now().Add(waitFor)
	for !finished() {
		if time.Now().After(deadline) {
			panic("drive: the code under test did not finish")
		}
		if clock.Pending() > 0 {
			clock.Advance(50 * time.Millisecond)
		}
		time.Sleep(200 * time.Microsecond)
	}
}

func (h *harness) stop() {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- h.sess.Stop(ctx) }()
	var err error
	drive(h.clock, func() bool {
		select {
		case err = <-done:
			return true
		default:
			return false
		}
	})
	if h.clock == nil {
		err = <-done
	}
	require.NoError(h.t, err)
	if pid := h.sess.PID(); pid != 0 {
		proctest.WaitGroupEmpty(h.t, pid, 3*time.Second)
	}
}

func (h *harness) turn(prompt string) domain.TurnResult {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return h.sess.Turn(ctx, prompt)
}

// turnAsync runs a turn in its own goroutine.
func (h *harness) turnAsync(ctx context.Context, prompt string) <-chan domain.TurnResult {
	done := make(chan domain.TurnResult, 1)
	go func() { done <- h.sess.Turn(ctx, prompt) }()
	return done
}

// waitReceived waits until the agent has received n messages of method.
func (h *harness) waitReceived(method string, n int) {
	h.t.Helper()
	require.Eventually(h.t, func() bool { return len(received(h.t, h.agentLg, method)) >= n },
		waitFor, 2*time.Millisecond, "the agent did not receive %d× %s", n, method)
}

// waitText waits until the agent's streamed text contains s.
func (h *harness) waitText(s string) {
	h.t.Helper()
	require.Eventually(h.t, func() bool { return strings.Contains(h.rec.Text(), s) },
		waitFor, time.Millisecond, "no agent text %q in %q", s, h.rec.Text())
}

// agentLog reads what the reference agent received so far.
func agentLog(t *testing.T, path string) []refagent.LogRecord {
	t.Helper()
	recs, err := refagent.ReadLog(path)
	require.NoError(t, err)
	return recs
}

// received returns the records of the agent's log with this method (for
// responses: answering this method).
func received(t *testing.T, path, method string) []refagent.LogRecord {
	t.Helper()
	var out []refagent.LogRecord
	for _, r := range agentLog(t, path) {
		if r.Method == method || r.Answers == method {
			out = append(out, r)
		}
	}
	return out
}

// testdata is the absolute path of a file in testdata.
func testdata(t *testing.T, name string) string {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join("testdata", name))
	require.NoError(t, err)
	return abs
}

// script is the reference agent's flags for a script in testdata.
func script(t *testing.T, name string) []string {
	return []string{"--script", testdata(t, name)}
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// readLogQuiet reads the agent's log without a test to fail.
func readLogQuiet(path string) ([]refagent.LogRecord, error) { return refagent.ReadLog(path) }
