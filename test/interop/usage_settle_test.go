//go:build interop

package interop

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/gemini_measure"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/proctest"
	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// Restart to settle the measurement source (docs/behaviour.md#token-accounting,
// rule 4) driven both ways with real processes: a wrapper whose name claims
// nothing but starts Gemini CLI, and a command named gemini that starts
// another runtime.

// Restart texts, as docs/behaviour.md#token-accounting words them.
const (
	relaunchWith    = "agent relaunched so its token usage can be measured: agent.command does not name the runtime it starts"
	relaunchWithout = "agent relaunched without usage settings meant for another runtime"
)

// launchRecord is one start a startCounter saw.
type launchRecord struct {
	pid int
	env []string // what acpdrive appended to the runtime's environment
}

// startCounter wraps the session's launcher and records every start.
type startCounter struct {
	inner ports.Launcher
	mu    sync.Mutex
	seen  []launchRecord
}

func (c *startCounter) Prepare(req ports.LaunchRequest) (ports.Plan, error) {
	plan, err := c.inner.Prepare(req)
	if err != nil {
		return nil, err
	}
	return &countedPlan{Plan: plan, c: c}, nil
}

func (c *startCounter) starts() []launchRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]launchRecord(nil), c.seen...)
}

type countedPlan struct {
	ports.Plan
	c *startCounter
}

func (p *countedPlan) Start(ctx context.Context, env []string) (ports.Process, error) {
	proc, err := p.Plan.Start(ctx, env)
	if err != nil {
		return nil, err
	}
	p.c.mu.Lock()
	p.c.seen = append(p.c.seen, launchRecord{pid: proc.Identity().PID, env: append([]string(nil), env...)})
	p.c.mu.Unlock()
	return proc, nil
}

// countStarts wraps the rig's launcher (after it is set) in c.
func countStarts(c *startCounter) optFn {
	return func(o *app.Options) {
		c.inner = o.Launcher
		o.Launcher = c
	}
}

// geminiSource is the Gemini source reading the rig's HOME, its private
// directory in the rig's TMPDIR.
func geminiSource(r *rig) optFn {
	return func(o *app.Options) {
		o.MeasurementSources = []ports.MeasurementSource{gemini_measure.New(gemini_measure.Options{
			Logger:  o.Logger.With("component", "gemini_measure"),
			Home:    r.home,
			TempDir: r.tmp,
		})}
	}
}

// telemetryVars are the GEMINI_TELEMETRY_ entries of an environment.
func telemetryVars(env []string) []string {
	var out []string
	for _, kv := range env {
		if strings.HasPrefix(kv, "GEMINI_TELEMETRY_") {
			out = append(out, kv)
		}
	}
	return out
}

// logLines are the acpdrive log lines containing s.
func logLines(r *rig, s string) []string {
	var out []string
	for _, l := range strings.Split(r.logs.String(), "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return out
}

// writeScript writes an executable shell script.
func writeScript(t *testing.T, path, body string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755))
}

// assertOneRestart checks the starts of a session start that restarted
// once: two starts, the session on the second's PID, no survivor of the
// first's process group, two "agent process started" records and one
// agent implementation record.
func assertOneRestart(t *testing.T, r *rig, c *startCounter, sess *app.Session) []launchRecord {
	t.Helper()
	starts := c.starts()
	require.Len(t, starts, 2, "one restart: two starts")
	assert.NotEqual(t, starts[0].pid, starts[1].pid)
	assert.Equal(t, starts[1].pid, sess.PID(), "the session's PID is the last start's")
	proctest.WaitGroupEmpty(t, starts[0].pid, 3*time.Second)
	assert.Len(t, logLines(r, `msg="agent process started"`), 2)
	assert.Len(t, logLines(r, `msg="agent implementation"`), 1, "one agent implementation record per session")
	return starts
}

// TestSettleWrapperMeasured: agent.command is a wrapper script whose name
// claims nothing and which execs Gemini CLI. The first start carries no
// source's settings; its handshake names gemini-cli, so acpdrive stops it
// and starts again with the Gemini source armed; both turns are measured
// exactly.
func TestSettleWrapperMeasured(t *testing.T) {
	t.Parallel()
	r, srv := geminiRig(t, true)
	r.readTimeout = geminiUsageReadTimeout
	gemini := locate(t, "gemini", "gemini/node_modules/.bin/gemini")
	wrapper := filepath.Join(r.root, "run-agent.sh")
	writeScript(t, wrapper, "exec "+shellQuote(gemini)+` "$@"`+"\n")
	r.command = []string{wrapper, "--acp", "-m", geminiModel}
	srv.Script(
		fakes.TextReply(geminiUsageTurns[0], "Hello ", "from the ", "fake Gemini."),
		fakes.TextReply(geminiUsageTurns[1], "Hello ", "again."),
	)

	c := &startCounter{}
	t0 := time.Now()
	sess := r.mustStart(geminiSource(r), passAppendedEnv, countStarts(c))
	t.Logf("session start with the restart took %v", time.Since(t0))
	agentIs(t, sess, "gemini-cli", "0.61.0")

	starts := assertOneRestart(t, r, c, sess)
	assert.Empty(t, telemetryVars(starts[0].env), "the first start carried no source's settings")
	assert.NotEmpty(t, telemetryVars(starts[1].env), "the second start carries the Gemini source's settings")
	restarts := logLines(r, relaunchWith)
	require.Len(t, restarts, 1, "one restart record")
	assert.Contains(t, restarts[0], "name=gemini-cli")
	assert.Empty(t, logLines(r, relaunchWithout))
	assert.Empty(t, logLines(r, "measurement source claimed the launch"), "the wrapper's name claims nothing")
	assert.Len(t, logLines(r, "measurement source armed for the runtime the handshake named"), 1)
	assert.Empty(t, sess.Capabilities().Gaps(), "token counts is not a gap")
	assert.Equal(t, domain.CapabilityState("ours"), sess.Capabilities().State(domain.CapTokenCounts))
	require.Len(t, telemetryDirs(t, r), 1, "one private directory, the second start's")

	for i, prompt := range []string{"say hello", "say hello again"} {
		t0 := time.Now()
		res := r.turn(sess, prompt)
		t.Logf("turn %d took %v with the measurement wait", i+1, time.Since(t0))
		require.Equal(t, completed, outcomeOf(res), "turn %d", i+1)
		require.NotNil(t, res.Usage, "turn %d is measured", i+1)
		assert.Equal(t, fakeGeminiUsage(geminiUsageTurns[i]), *res.Usage, "turn %d's TurnResult.Usage", i+1)
		assert.Equal(t, geminiModel, res.Model)
	}
	usages := r.rec.OfType(domain.EventTokenUsage)
	require.Len(t, usages, 2, "one token_usage per turn:\n%s", strings.Join(r.shape(), "\n"))
	for i, want := range geminiUsageTurns {
		require.NotNil(t, usages[i].Usage)
		assert.Equal(t, fakeGeminiUsage(want), *usages[i].Usage, "turn %d's own figures", i+1)
		assert.Equal(t, geminiModel, usages[i].Model)
	}
	assert.Len(t, srv.ModelCalls(), 2, srv.Describe())
	assert.NotContains(t, r.shape(), gapNotice(domain.CapTokenCounts))
	assert.Empty(t, sess.Capabilities().Gaps())

	r.stop(sess)
	assert.Empty(t, telemetryDirs(t, r), "the source's directory is removed at session end")
}

// TestSettleNamedButOtherRuntime: agent.command is a script named gemini
// (so the Gemini source claims it) that execs acpdrive's reference agent.
// The first start carries the Gemini telemetry settings; its handshake
// names acpdrive-reference-agent, which no source reads, so acpdrive stops
// it and starts again with no source's settings; the turn is unmeasured.
func TestSettleNamedButOtherRuntime(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	envLog := filepath.Join(r.root, "starts.log")
	script := filepath.Join(r.root, "bin", "gemini")
	writeScript(t, script, "{ echo \"start $$\"; env | grep '^GEMINI_TELEMETRY_' | sort; } >> "+shellQuote(envLog)+"\n"+
		"exec "+shellQuote(testbin.Path(t))+" agent\n")
	r.command = []string{script}

	c := &startCounter{}
	t0 := time.Now()
	sess := r.mustStart(geminiSource(r), passAppendedEnv, countStarts(c))
	t.Logf("session start with the restart took %v", time.Since(t0))
	assert.Equal(t, "acpdrive-reference-agent", sess.AgentInfo().Name)

	starts := assertOneRestart(t, r, c, sess)
	assert.NotEmpty(t, telemetryVars(starts[0].env), "the claimed first start carries the Gemini settings")
	assert.Empty(t, telemetryVars(starts[1].env), "the second start carries none")
	restarts := logLines(r, relaunchWithout)
	require.Len(t, restarts, 1, "one restart record")
	assert.Contains(t, restarts[0], "name=acpdrive-reference-agent")
	assert.Empty(t, logLines(r, relaunchWith))
	assert.Len(t, logLines(r, "measurement source claimed the launch"), 1)
	assert.Empty(t, logLines(r, "measurement source armed for the runtime the handshake named"))
	assert.Empty(t, telemetryDirs(t, r), "the dropped source's directory is removed before the next start")

	// What each start's process saw, as the script recorded it.
	raw, err := os.ReadFile(envLog)
	require.NoError(t, err)
	blocks := strings.Split(strings.TrimPrefix(string(raw), "start "), "start ")
	require.Len(t, blocks, 2, "the script ran once per start:\n%s", raw)
	seen := func(b string) []string {
		lines := strings.Split(strings.TrimSpace(b), "\n")
		return lines[1:] // after the PID
	}
	assert.NotEmpty(t, seen(blocks[0]), "the first start's process got the telemetry settings")
	assert.Empty(t, seen(blocks[1]), "the second start's process got no GEMINI_TELEMETRY_ variable")

	// The reference agent advertises no loadSession: session continuation
	// is its other gap.
	gaps := []domain.CapabilityLabel{domain.CapTokenCounts, domain.CapSessionContinuation}
	assert.Equal(t, gaps, sess.Capabilities().Gaps(), "token counts is a gap")
	res := r.turn(sess, "hello")
	assert.Equal(t, completed, outcomeOf(res))
	assert.Nil(t, res.Usage, "the turn is not measured")
	assert.Empty(t, res.Model)
	assert.Empty(t, r.rec.OfType(domain.EventTokenUsage), "no token_usage event")
	assert.Contains(t, r.shape(), gapNotice(gaps...))
	r.stop(sess)
}

// stallProxy stands between a runtime and its fake model server: it
// forwards every request but holds the model calls it is told to stall
// (by their index among POSTs to path) without answering, until the
// client gives up or the test ends.
type stallProxy struct {
	srv     *httptest.Server
	tr      *http.Transport
	path    string
	stall   map[int]bool
	mu      sync.Mutex
	calls   int
	stalled chan int      // receives the index of each stalled call
	release chan struct{} // closed at cleanup
}

func newStallProxy(t *testing.T, target, path string, stall ...int) *stallProxy {
	t.Helper()
	u, err := url.Parse(target)
	require.NoError(t, err)
	p := &stallProxy{
		tr:      &http.Transport{},
		path:    path,
		stall:   map[int]bool{},
		stalled: make(chan int, 8),
		release: make(chan struct{}),
	}
	for _, i := range stall {
		p.stall[i] = true
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.Transport = p.tr
	rp.FlushInterval = -1
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodPost && req.URL.Path == p.path {
			p.mu.Lock()
			n := p.calls
			p.calls++
			p.mu.Unlock()
			if p.stall[n] {
				_, _ = io.Copy(io.Discard, req.Body)
				p.stalled <- n
				select {
				case <-req.Context().Done():
				case <-p.release:
				}
				return
			}
		}
		rp.ServeHTTP(w, req)
	}))
	t.Cleanup(func() {
		close(p.release)
		p.srv.Close()
		p.tr.CloseIdleConnections()
	})
	return p
}

// codexRigStalled is codexRig with the runtime's model calls going
// through a stallProxy that holds the calls numbered stall (from 0).
func codexRigStalled(t *testing.T, stall ...int) (*rig, *fakes.Server, *stallProxy) {
	r, srv := codexRig(t)
	p := newStallProxy(t, srv.URL(), "/v1/responses", stall...)
	config := filepath.Join(r.root, "codex-home", "config.toml")
	raw, err := os.ReadFile(config)
	require.NoError(t, err)
	require.Contains(t, string(raw), srv.URL())
	writeFile(t, config, strings.ReplaceAll(string(raw), srv.URL(), p.srv.URL))
	return r, srv, p
}

// cancelledTurn runs a turn whose model call the proxy stalls and cancels
// it once the call is held.
func cancelledTurn(t *testing.T, r *rig, sess *app.Session, p *stallProxy, prompt string) domain.TurnResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	go func() {
		select {
		case <-p.stalled:
			cancel()
		case <-ctx.Done():
		}
	}()
	t0 := time.Now()
	res := sess.Turn(ctx, prompt)
	t.Logf("cancelled turn took %v", time.Since(t0))
	return res
}

// turnCancelled is the outcome of a turn the caller cancelled.
var turnCancelled = outcome{Outcome: "turn_cancelled", Kind: "turn_cancelled", Message: "turn cancelled"}

// TestUsageCancelCodex: a turn cancelled while its one model call is
// held unanswered has no complete record in the rollout, so no figure;
// the source stays, and the next turn is measured exactly.
func TestUsageCancelCodex(t *testing.T) {
	t.Parallel()
	t.Run("after a measured turn", func(t *testing.T) {
		r, srv, p := codexRigStalled(t, 1)
		srv.Script(
			fakes.TextReply(codexTurnUsage[0], "First ", "answer."),
			fakes.TextReply(codexTurnUsage[1], "Third ", "answer."),
		)
		sess := r.mustStart(codexMeasured(r))
		assert.Empty(t, sess.Capabilities().Gaps())

		res1 := r.turn(sess, "first question")
		require.Equal(t, completed, outcomeOf(res1))
		require.NotNil(t, res1.Usage)
		assert.Equal(t, wantCodexUsage(codexTurnUsage[0]), *res1.Usage)

		res2 := cancelledTurn(t, r, sess, p, "second question")
		assert.Equal(t, turnCancelled, outcomeOf(res2))
		assert.Nil(t, res2.Usage, "no complete record: no figure")

		res3 := r.turn(sess, "third question")
		require.Equal(t, completed, outcomeOf(res3))
		require.NotNil(t, res3.Usage, "the source stays after the cancelled turn")
		assert.Equal(t, wantCodexUsage(codexTurnUsage[1]), *res3.Usage)
		r.stop(sess)
		logWaits(t, r)

		evs := usageEvents(r)
		require.Len(t, evs, 2, "token_usage for the two completed turns only:\n%s", strings.Join(r.shape(), "\n"))
		assert.Equal(t, wantCodexUsage(codexTurnUsage[0]), *evs[0].Usage)
		assert.Equal(t, wantCodexUsage(codexTurnUsage[1]), *evs[1].Usage)
		for _, ev := range evs {
			assert.Equal(t, codexModel, ev.Model)
		}
		assert.Empty(t, sess.Capabilities().Gaps(), "token counts stays delivered")
		assert.NotContains(t, r.shape(), gapNotice(domain.CapTokenCounts))
		assert.Len(t, srv.ModelCalls(), 2, "the held call never reached the fake:\n%s", srv.Describe())
	})

	// docs/behaviour.md#token-accounting rule 6 as written: the cancelled
	// first turn's wait let the source answer (Codex wrote turn_aborted)
	// and it had nothing, before any turn had a figure, so the source is
	// dropped for the session and the next turn goes unmeasured.
	t.Run("as the first turn", func(t *testing.T) {
		r, srv, p := codexRigStalled(t, 0)
		srv.Script(fakes.TextReply(codexTurnUsage[1], "Second ", "answer."))
		sess := r.mustStart(codexMeasured(r))
		assert.Empty(t, sess.Capabilities().Gaps())

		res1 := cancelledTurn(t, r, sess, p, "first question")
		assert.Equal(t, turnCancelled, outcomeOf(res1))
		assert.Nil(t, res1.Usage, "no complete record: no figure")
		assert.Len(t, logLines(r, "codex rollout: the turn ended without a complete token_count record"), 1)
		// A turn that did not complete says nothing about the source
		// (docs/behaviour.md#token-accounting, drop rules): it stays.
		assert.Empty(t, logLines(r, "measurement source reported nothing for the first measured turn; dropped for the session"))
		assert.Empty(t, sess.Capabilities().Gaps(), "token counts stays delivered")
		assert.Empty(t, logLines(r, domain.MsgCapabilityLoweredLate))

		res2 := r.turn(sess, "second question")
		require.Equal(t, completed, outcomeOf(res2))
		require.NotNil(t, res2.Usage, "the source stayed: the next completed turn is measured")
		assert.Equal(t, wantCodexUsage(codexTurnUsage[1]), *res2.Usage)
		r.stop(sess)
		assert.Len(t, usageEvents(r), 1)
		assert.Len(t, srv.ModelCalls(), 1, srv.Describe())
	})
}
