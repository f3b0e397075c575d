package app_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/acpdrive/acpdrive/adapters/localexec"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/proctest"
	"github.com/acpdrive/acpdrive/internal/testbin"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

// recorder collects events in order.
type recorder struct {
	mu     sync.Mutex
	events []domain.Event
	texts  []string
}

func (r *recorder) add(ev domain.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, ev)
}

func (r *recorder) addText(_, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.texts = append(r.texts, text)
}

func (r *recorder) all() []domain.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]domain.Event(nil), r.events...)
}

// reset forgets the events seen so far (between turns of one session).
func (r *recorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events, r.texts = nil, nil
}

// shape renders events as "type" or "type:message", collapsing runs of
// empty notifications (one per chunk) into a single "notification*".
func (r *recorder) shape() []string {
	var out []string
	for _, ev := range r.all() {
		s := string(ev.Type)
		if ev.Message != "" {
			s += ":" + ev.Message
		}
		if s == "notification" {
			s = "notification*"
			if len(out) > 0 && out[len(out)-1] == s {
				continue
			}
		}
		out = append(out, s)
	}
	return out
}

func (r *recorder) ofType(t domain.EventType) []domain.Event {
	var out []domain.Event
	for _, ev := range r.all() {
		if ev.Type == t {
			out = append(out, ev)
		}
	}
	return out
}

// logBuffer is a concurrency-safe slog sink for asserting log records.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// harness is one session on a real reference-agent process.
type harness struct {
	t       *testing.T
	sess    *app.Session
	rec     *recorder
	logs    *logBuffer
	agentLg string
	opts    app.Options
}

type option func(*app.Options)

func withReadTimeout(d time.Duration) option {
	return func(o *app.Options) { o.Config.ReadTimeout = d }
}

func withStopGrace(d time.Duration) option {
	return func(o *app.Options) { o.Config.StopGrace = d }
}

// agentOptions builds the options of a session on the reference agent
// started with args.
func agentOptions(t *testing.T, args []string, opts ...option) (app.Options, *recorder, *logBuffer, string) {
	t.Helper()
	rec := &recorder{}
	logs := &logBuffer{}
	agentLog := filepath.Join(t.TempDir(), "agent.log")
	cfg := domain.DefaultConfig()
	cfg.Command = append([]string{testbin.Path(t), "agent", "--log", agentLog}, args...)
	cfg.ReadTimeout = 3 * time.Second
	cfg.StopGrace = 3 * time.Second
	cfg.StallTimeout = 0
	o := app.Options{
		Config:      cfg,
		Workspace:   t.TempDir(),
		Launcher:    localexec.New(localexec.Options{}),
		Logger:      slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		OnEvent:     rec.add,
		OnAgentText: rec.addText,
	}
	for _, f := range opts {
		f(&o)
	}
	return o, rec, logs, agentLog
}

// start starts a session on the reference agent and registers a cleanup
// that stops it and checks that no member of its process group survives.
func start(t *testing.T, args []string, opts ...option) *harness {
	t.Helper()
	o, rec, logs, agentLog := agentOptions(t, args, opts...)
	sess, err := app.Start(context.Background(), o)
	require.NoError(t, err)
	h := &harness{t: t, sess: sess, rec: rec, logs: logs, agentLg: agentLog, opts: o}
	t.Cleanup(func() { h.stop() })
	return h
}

func (h *harness) stop() {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(h.t, h.sess.Stop(ctx))
	proctest.WaitGroupEmpty(h.t, h.sess.PID(), 3*time.Second)
}

func (h *harness) turn(prompt string) domain.TurnResult {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return h.sess.Turn(ctx, prompt)
}

// agentRecord is one line of the reference agent's --log file.
type agentRecord struct {
	Kind    string          `json:"kind"`
	Method  string          `json:"method"`
	Answers string          `json:"answers"`
	Message json.RawMessage `json:"message"`
}

// agentLog reads what the reference agent received so far.
func agentLog(t *testing.T, path string) []agentRecord {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []agentRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var r agentRecord
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		out = append(out, r)
	}
	require.NoError(t, sc.Err())
	return out
}

// received counts the records of the agent's log with this method (for
// responses: answering this method).
func received(t *testing.T, path, method string) []agentRecord {
	var out []agentRecord
	for _, r := range agentLog(t, path) {
		if r.Method == method || r.Answers == method {
			out = append(out, r)
		}
	}
	return out
}
