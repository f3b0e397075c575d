package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/localexec"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/refagent"
)

// sessionRecorder is a ports.SessionObserver that writes down what app
// tells it, one line per call, per session start.
type sessionRecorder struct {
	meta map[string]string // what TurnStarted answers

	mu       sync.Mutex
	sessions []*sessionLog
	direct   int // events given to Observe itself
}

func (r *sessionRecorder) Observe(domain.Event) {
	r.mu.Lock()
	r.direct++
	r.mu.Unlock()
}

func (r *sessionRecorder) ObserveSession(_ context.Context, at time.Time) ports.SessionObservation {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := &sessionLog{meta: r.meta, began: at}
	r.sessions = append(r.sessions, s)
	return s
}

func (r *sessionRecorder) only(t *testing.T) *sessionLog {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	require.Len(t, r.sessions, 1, "one observation per session start")
	assert.Zero(t, r.direct, "a session observer gets its events through the observation")
	return r.sessions[0]
}

type sessionLog struct {
	meta  map[string]string
	began time.Time

	mu     sync.Mutex
	calls  []string
	steps  []ports.Step
	events []domain.EventType
	info   ports.SessionInfo
	end    ports.SessionEnd
}

func (s *sessionLog) add(c string) {
	s.mu.Lock()
	s.calls = append(s.calls, c)
	s.mu.Unlock()
}

func (s *sessionLog) Observe(ev domain.Event) {
	s.mu.Lock()
	s.events = append(s.events, ev.Type)
	s.mu.Unlock()
	if ev.Type == domain.EventStartupFailed || ev.Type == domain.EventSessionStarted {
		s.add("event " + string(ev.Type))
	}
}

func (s *sessionLog) Step(st ports.Step) {
	s.mu.Lock()
	s.steps = append(s.steps, st)
	s.mu.Unlock()
	c := "step " + st.Name
	if st.Within != "" {
		c += " in " + st.Within
	}
	if st.Err != nil {
		c += " failed"
	}
	s.add(c)
}

func (s *sessionLog) Notice(_ time.Time, msg string) { s.add("notice " + msg) }

func (s *sessionLog) Started(info ports.SessionInfo) {
	s.mu.Lock()
	s.info = info
	s.mu.Unlock()
	s.add("started " + info.Route)
}

func (s *sessionLog) TurnStarted(time.Time) map[string]string {
	s.add("turn")
	return s.meta
}

func (s *sessionLog) TurnEnded(_ time.Time, res domain.TurnResult) {
	s.add("turn ended " + string(res.Outcome))
}

func (s *sessionLog) Ended(end ports.SessionEnd) {
	s.mu.Lock()
	s.end = end
	s.mu.Unlock()
	s.add(fmt.Sprintf("ended started=%t failed=%t", end.Started, end.Err != nil))
}

func (s *sessionLog) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// withoutTeardownSteps drops the teardown's inner steps, which depend on
// how fast the runtime exits (the terminate step runs only when it did
// not exit in its window).
func withoutTeardownSteps(lines []string) []string {
	return slices.DeleteFunc(lines, func(l string) bool { return strings.HasSuffix(l, " in teardown") })
}

// countingObserver is a plain ports.Observer.
type countingObserver struct {
	mu sync.Mutex
	n  int
}

func (c *countingObserver) Observe(domain.Event) { c.mu.Lock(); c.n++; c.mu.Unlock() }

func withObservers(obs ...ports.Observer) option {
	return func(o *app.Options) { o.Observers = obs }
}

// TestObservedSession: the steps, notices, turns and end of a whole
// session reach a session observer in order, with the teardown's steps in
// the teardown; a plain observer beside it gets every event; the prompt's
// _meta carries the trace context keys and nothing else.
func TestObservedSession(t *testing.T) {
	t.Parallel()
	const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	rec := &sessionRecorder{meta: map[string]string{
		"traceparent": traceparent, "tracestate": "acme=1", "x-not-allowed": "dropped",
	}}
	plain := &countingObserver{}
	h := startProc(t, []string{"--scenario", "close"}, withObservers(rec, plain))
	res := h.turn("#permission-refusable")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	h.stop()

	s := rec.only(t)
	notice, _ := h.sess.Capabilities().Notice()
	assert.Equal(t, []string{
		"step launch", "step initialize", "step session/new", "started session/new",
		"turn", "event session_started", "notice " + notice, "notice " + domain.MsgPermissionRefused,
		"turn ended turn_completed",
		"step teardown", "ended started=true failed=false",
	}, withoutTeardownSteps(s.lines()))
	assert.Equal(t, h.sess.ID(), s.info.SessionID)
	assert.Equal(t, refagent.AgentName, s.info.Agent.Name)

	// The teardown's steps: in order, each from the end of the one before,
	// all inside the teardown.
	var inner []string
	var td ports.Step
	prevEnd := time.Time{}
	for _, st := range s.steps {
		switch {
		case st.Within == ports.StepTeardown:
			inner = append(inner, st.Name)
			if !prevEnd.IsZero() {
				assert.Equal(t, prevEnd, st.Start, st.Name)
			}
			prevEnd = st.End
			assert.False(t, st.End.Before(st.Start), st.Name)
		case st.Name == ports.StepTeardown:
			td = st
		}
	}
	require.NotEmpty(t, inner)
	assert.Equal(t, []string{ports.StepCloseSession, ports.StepCloseStdin, ports.StepExitWindow}, inner[:3])
	assert.Equal(t, []string{ports.StepKill, ports.StepDrain, ports.StepReap, ports.StepRelease}, inner[len(inner)-4:])
	assert.False(t, prevEnd.After(td.End), "the teardown holds its steps")
	assert.False(t, s.steps[0].Start.Before(s.began), "no step before the observation")

	// Every event reached the plain observer and the observation alike.
	plain.mu.Lock()
	assert.Equal(t, len(h.rec.All()), plain.n)
	plain.mu.Unlock()
	assert.Len(t, s.events, len(h.rec.All()))

	// The prompt's _meta: the W3C keys only.
	var metas []map[string]string
	for _, r := range agentLog(t, h.agentLg) {
		if r.Kind == "request" && r.Method == "session/prompt" {
			var m struct {
				Params struct {
					Meta map[string]string `json:"_meta"`
				} `json:"params"`
			}
			require.NoError(t, json.Unmarshal(r.Message, &m))
			metas = append(metas, m.Params.Meta)
		}
	}
	assert.Equal(t, []map[string]string{{"traceparent": traceparent, "tracestate": "acme=1"}}, metas)
}

// TestObservedStartRoutes: the continuation is a step named by its route;
// a restart to settle holds the first start's teardown; credential
// verification is a step of its own; a failed start ends the observation
// with its error and never reports a started session.
func TestObservedStartRoutes(t *testing.T) {
	t.Parallel()
	t.Run("resume", func(t *testing.T) {
		t.Parallel()
		rec := &sessionRecorder{}
		h := start(t, []string{"--scenario", "resume"}, withObservers(rec), withResume("ref-7"))
		h.stop()
		assert.Equal(t, []string{
			"step launch", "step initialize", "step session/resume", "started session/resume",
			"step teardown", "ended started=true failed=false",
		}, withoutTeardownSteps(rec.only(t).lines()))
	})
	t.Run("restart to settle", func(t *testing.T) {
		t.Parallel()
		rec := &sessionRecorder{}
		other := &fakeSource{name: "other", runtime: "some-other-runtime", claimWord: "acpdrive-reference-agent"}
		o, erec, logs, agentLog := agentOptions(t, nil, withObservers(rec))
		o.MeasurementSources = []ports.MeasurementSource{other}
		h := startWith(t, o, erec, logs, agentLog)
		h.stop()
		assert.Equal(t, []string{
			"step launch", "step initialize", "step teardown in restart", "step restart",
			"step launch", "step initialize", "step session/new", "started session/new",
			"step teardown", "ended started=true failed=false",
		}, withoutTeardownSteps(rec.only(t).lines()))
	})
	t.Run("credential verification", func(t *testing.T) {
		t.Parallel()
		rec := &sessionRecorder{}
		o, erec, logs, agentLog := agentOptions(t, []string{"--scenario", "delete"}, withObservers(rec))
		o.VerifyCredential = true
		h := startWith(t, o, erec, logs, agentLog)
		h.stop()
		lines := withoutTeardownSteps(rec.only(t).lines())
		require.NotEmpty(t, lines)
		assert.Equal(t, "step credential_verification", lines[0])
		assert.Equal(t, "step launch", lines[1], "the verification session's own steps are not observed")
	})
	t.Run("failed start", func(t *testing.T) {
		t.Parallel()
		rec := &sessionRecorder{}
		o, _, _ := baseOptions(t, withObservers(rec))
		o.Settings.Command = []string{"acpdrive-no-such-program"}
		o.Launcher = localexec.New(localexec.Options{})
		_, err := app.Start(context.Background(), o)
		require.Error(t, err)
		s := rec.only(t)
		assert.Equal(t, []string{"step launch failed", "event startup_failed", "ended started=false failed=true"}, s.lines())
		assert.ErrorIs(t, s.end.Err, domain.KindAgentNotFound)
	})
	t.Run("refused by validation: not observed", func(t *testing.T) {
		t.Parallel()
		rec := &sessionRecorder{}
		o, _, _ := baseOptions(t, withObservers(rec))
		o.Launcher = localexec.New(localexec.Options{})
		o.Settings.ReadTimeout = -time.Second
		o.Settings.StopGrace = -time.Second
		_, err := app.Start(context.Background(), o)
		require.ErrorIs(t, err, domain.KindAgentNotFound, "a refused configuration")
		rec.mu.Lock()
		defer rec.mu.Unlock()
		assert.Empty(t, rec.sessions)
	})
}

// TestProbeIsNotObservedAsASession: a probe opens no observation; what it
// emits reaches every observer's Observe, as before session observers.
func TestProbeIsNotObservedAsASession(t *testing.T) {
	t.Parallel()
	rec := &sessionRecorder{}
	plain := &countingObserver{}
	o, erec, _, _ := agentOptions(t, []string{"--scenario", "exit-before-init"}, withObservers(rec, plain))
	_, err := app.Probe(context.Background(), o)
	require.Error(t, err)
	rec.mu.Lock()
	assert.Empty(t, rec.sessions)
	assert.Equal(t, len(erec.All()), rec.direct)
	rec.mu.Unlock()
	plain.mu.Lock()
	assert.Equal(t, len(erec.All()), plain.n)
	plain.mu.Unlock()
	assert.NotEmpty(t, erec.All(), "the failed probe reported startup_failed")
}
