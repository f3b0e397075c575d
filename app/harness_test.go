package app_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/localexec"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/eventrec"
	"github.com/acpdrive/acpdrive/internal/proctest"
	"github.com/acpdrive/acpdrive/internal/testbin"
	"github.com/acpdrive/acpdrive/refagent"
)

func TestMain(m *testing.M) { testbin.Main(m) }

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

// agentLog reads what the reference agent received so far.
func agentLog(t *testing.T, path string) []refagent.LogRecord {
	t.Helper()
	recs, err := refagent.ReadLog(path)
	require.NoError(t, err)
	return recs
}

// received counts the records of the agent's log with this method (for
// responses: answering this method).
func received(t *testing.T, path, method string) []refagent.LogRecord {
	var out []refagent.LogRecord
	for _, r := range agentLog(t, path) {
		if r.Method == method || r.Answers == method {
			out = append(out, r)
		}
	}
	return out
}
