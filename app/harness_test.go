package app_test

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/acpdrive/acpdrive/adapters/localexec"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/eventrec"
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

// harness is one session on a real reference-agent process.
type harness struct {
	t       *testing.T
	sess    *app.Session
	rec     *eventrec.Recorder
	logs    *eventrec.Log
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
func agentOptions(t *testing.T, args []string, opts ...option) (app.Options, *eventrec.Recorder, *eventrec.Log, string) {
	t.Helper()
	rec := &eventrec.Recorder{}
	logs := &eventrec.Log{}
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
		OnEvent:     rec.Add,
		OnAgentText: rec.AddText,
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
