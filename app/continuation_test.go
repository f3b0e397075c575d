package app_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/golang/mock/gomock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports/mocks"
)

func testdata(t *testing.T, name string) string {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join("testdata", name))
	require.NoError(t, err)
	return abs
}

func withResume(id string) option { return func(o *app.Options) { o.ResumeSessionID = id } }

func TestContinuationRoutes(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		route   string
		id      string
		gap     bool
		sent    []string // methods the agent must have received, in order
		notSent []string
		logs    []string
	}{
		{name: "load confirmed by replay", args: []string{"--scenario", "load"},
			route: "session/load", id: "saved-1",
			sent: []string{app.NegativeControlMethod, "session/load"}, notSent: []string{"session/new"}},
		{name: "load without replay", args: []string{"--scenario", "load-no-replay"},
			route: "session/new", id: "ref-1", gap: true,
			sent: []string{app.NegativeControlMethod, "session/load", "session/new"},
			logs: []string{"session continuation not confirmed; falling back to session/new", "replayed no message"}},
		{name: "load erroring", args: []string{"--scenario", "load-error"},
			route: "session/new", id: "ref-1", gap: true,
			sent: []string{app.NegativeControlMethod, "session/load", "session/new"},
			logs: []string{"verdict=broken", "call_code=-32603", "control_code=-32601"}},
		{name: "load unimplemented", args: []string{"--script", "testdata/load-unimplemented.json"},
			route: "session/new", id: "ref-1", gap: true,
			sent: []string{app.NegativeControlMethod, "session/load", "session/new"},
			logs: []string{"verdict=unimplemented", "call_code=-32601", "control_code=-32601"}},
		{name: "resume ok", args: []string{"--scenario", "resume"},
			route: "session/resume", id: "saved-1",
			sent: []string{app.NegativeControlMethod, "session/resume"}, notSent: []string{"session/new"}},
		{name: "resume erroring", args: []string{"--scenario", "resume-error"},
			route: "session/new", id: "ref-1", gap: true,
			sent: []string{app.NegativeControlMethod, "session/resume", "session/new"},
			logs: []string{"verdict=broken", "call_code=-32002"}},
		{name: "negative control unanswered", args: []string{"--script", "testdata/control-unanswered.json"},
			route: "session/new", id: "ref-1", gap: true,
			sent: []string{app.NegativeControlMethod, "session/new"}, notSent: []string{"session/load"},
			logs: []string{"the negative control was not answered"}},
		{name: "nothing advertised", args: nil,
			route: "session/new", id: "ref-1", gap: true,
			sent: []string{"session/new"}, notSent: []string{app.NegativeControlMethod, "session/load", "session/resume"},
			logs: []string{"the runtime advertises no continuation method"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := c.args
			if len(args) == 2 && args[0] == "--script" {
				args = []string{"--script", testdata(t, filepath.Base(args[1]))}
			}
			h := start(t, args, withResume("saved-1"), withReadTimeout(time.Second))
			assert.Equal(t, c.route, h.sess.Route())
			assert.Equal(t, c.id, h.sess.ID())
			state := h.sess.Capabilities().State(domain.CapSessionContinuation)
			if c.gap {
				assert.Equal(t, domain.CapGap, state)
			} else {
				assert.Equal(t, domain.CapProtocol, state)
			}
			var methods []string
			for _, r := range agentLog(t, h.agentLg) {
				if r.Kind == "request" {
					methods = append(methods, r.Method)
				}
			}
			assert.Subset(t, methods, c.sent)
			for i := 1; i < len(c.sent); i++ {
				assert.Less(t, indexOf(methods, c.sent[i-1]), indexOf(methods, c.sent[i]), "order of %v in %v", c.sent, methods)
			}
			for _, m := range c.notSent {
				assert.NotContains(t, methods, m)
			}
			for _, l := range c.logs {
				assert.Contains(t, h.logs.String(), l)
			}
			// The session works on whatever it resolved to.
			res := h.turn("hello again")
			require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
			assert.Equal(t, c.id, h.rec.OfType(domain.EventSessionStarted)[0].SessionID)
		})
	}
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// TestReplayIsNotDatedIntoTheNextTurn checks that the message a
// session/load replays is reported with the time of its last chunk, before
// the next turn's session_started.
func TestReplayIsNotDatedIntoTheNextTurn(t *testing.T) {
	h := start(t, []string{"--scenario", "load"}, withResume("saved-1"))
	time.Sleep(50 * time.Millisecond)
	h.turn("next")
	events := h.rec.All()
	var replayed, started domain.Event
	for _, ev := range events {
		if ev.Message == "(replayed answer)" {
			replayed = ev
		}
		if ev.Type == domain.EventSessionStarted && started.Type == "" {
			started = ev
		}
	}
	require.NotEmpty(t, replayed.Type, "the replayed answer is reported")
	assert.True(t, replayed.Time.Before(started.Time), "replayed %v, turn started %v", replayed.Time, started.Time)
}

// TestLoadHoldsUntilTheCreationMinuteHasPassed uses a mocked clock: the
// session is created at 12:00:30 UTC and loaded at 12:00:40, so the load is
// held 20 s; the clock's After answers at once so the test does not sleep.
func TestLoadHoldsUntilTheCreationMinuteHasPassed(t *testing.T) {
	ctrl := gomock.NewController(t)
	clock := mocks.NewMockClock(ctrl)
	var mu sync.Mutex
	now := time.Date(2026, 11, 30, 12, 0, 30, 0, time.UTC)
	var waits []time.Duration
	clock.EXPECT().Now().DoAndReturn(func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}).AnyTimes()
	clock.EXPECT().After(gomock.Any()).DoAndReturn(func(d time.Duration) <-chan time.Time {
		mu.Lock()
		defer mu.Unlock()
		waits = append(waits, d)
		if d > 10*time.Second {
			return time.After(time.Millisecond) // the hold: compressed
		}
		return time.After(d)
	}).AnyTimes()
	withClock := func(o *app.Options) { o.Clock = clock }

	first := start(t, []string{"--scenario", "load"}, withClock)
	created := first.sess.ID()
	first.stop()

	mu.Lock()
	now = now.Add(10 * time.Second)
	waits = nil
	mu.Unlock()
	second := start(t, []string{"--scenario", "load"}, withClock, withResume(created))
	assert.Equal(t, "session/load", second.sess.Route())
	assert.Equal(t, created, second.sess.ID())
	mu.Lock()
	assert.Contains(t, waits, 20*time.Second, "held until 12:01:00")
	mu.Unlock()
	assert.Contains(t, second.logs.String(), "holding session/load until the UTC minute of the session's creation has passed")

	// A session created in an earlier minute is not held.
	mu.Lock()
	now = now.Add(time.Minute)
	waits = nil
	mu.Unlock()
	third := start(t, []string{"--scenario", "load"}, withClock, withResume(created))
	assert.Equal(t, "session/load", third.sess.Route())
	assert.NotContains(t, third.logs.String(), "holding session/load")
}

func TestSessionIDNotFromThisProcessIsNotHeld(t *testing.T) {
	h := start(t, []string{"--scenario", "load"}, withResume("from-an-earlier-process"))
	assert.Equal(t, "session/load", h.sess.Route())
	assert.NotContains(t, h.logs.String(), "holding session/load")
}

func TestCredentialVerification(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		opts    []option
		kind    domain.ErrorKind // "" means verified
		message string
		sent    map[string]int
		logs    []string
	}{
		{name: "verified, deleted", args: []string{"--scenario", "delete"},
			sent: map[string]int{"session/new": 2, "session/prompt": 1, "session/delete": 1, "session/close": 1}},
		{name: "verified, close only", args: []string{"--scenario", "close"},
			sent: map[string]int{"session/new": 2, "session/prompt": 1, "session/close": 2, "session/delete": 0}},
		{name: "session/new refused", args: []string{"--scenario", "auth-required"},
			kind: domain.KindCredentialUnverified, message: "the agent runtime refused its credential: Authentication required",
			sent: map[string]int{"session/new": 1, "session/prompt": 0}},
		{name: "prompt refused", args: []string{"--script", "testdata/prompt-auth-required.json"},
			kind: domain.KindCredentialUnverified, message: "the agent runtime refused its credential: Authentication required",
			sent: map[string]int{"session/new": 1, "session/prompt": 1}},
		{name: "early exit keeps its kind", args: []string{"--scenario", "exit-before-init"},
			kind: domain.KindPortExit},
		{name: "not answered", args: []string{"--scenario", "slow-new"}, opts: []option{withReadTimeout(300 * time.Millisecond)},
			kind: domain.KindCredentialUnverified, message: "the agent runtime did not complete a credential verification request: timed out waiting for a response"},
		{name: "non-retryable kind kept", args: []string{"--script", "testdata/verify-refusal.json"},
			kind: domain.KindTurnRefused},
		{name: "failed delete logged at warn", args: []string{"--script", "testdata/delete-fails.json"},
			sent: map[string]int{"session/delete": 1},
			logs: []string{"level=WARN msg=\"session delete failed; the verification session stays stored by the runtime\""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := c.args
			if len(args) == 2 && args[0] == "--script" {
				args = []string{"--script", testdata(t, filepath.Base(args[1]))}
			}
			o, rec, logs, agentLg := agentOptions(t, args, c.opts...)
			o.VerifyCredential = true
			sess, err := app.Start(context.Background(), o)
			if c.kind == "" {
				require.NoError(t, err)
				require.NoError(t, sess.Stop(context.Background()))
			} else {
				require.Error(t, err)
				assert.ErrorIs(t, err, c.kind)
				if c.message != "" {
					var ae *domain.AgentError
					require.ErrorAs(t, err, &ae)
					assert.Equal(t, c.message, ae.Message)
				}
				require.Len(t, rec.OfType(domain.EventStartupFailed), 1)
			}
			for method, n := range c.sent {
				assert.Len(t, received(t, agentLg, method), n, method)
			}
			for _, l := range c.logs {
				assert.Contains(t, logs.String(), l)
			}
			// The verification session's events are not reported.
			for _, ev := range rec.All() {
				assert.NotEqual(t, domain.EventSessionStarted, ev.Type)
			}
		})
	}
}

// TestReplayAfterTheLoadResponseStaysBeforeTheTurn covers runtimes that
// keep replaying after answering session/load (Gemini CLI does): the start
// waits for the replay to go quiet, so a turn started right away does not
// take the replayed reply for its own.
func TestReplayAfterTheLoadResponseStaysBeforeTheTurn(t *testing.T) {
	h := start(t, []string{"--script", testdata(t, "load-replays-after.json")}, withResume("saved-1"))
	require.Equal(t, "session/load", h.sess.Route())
	res := h.turn("next")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	shape := h.rec.Shape()
	started := indexOf(shape, "session_started:session started")
	replayed := indexOf(shape, "notification:The word is apple.")
	require.NotEqual(t, -1, replayed, "the replayed reply is reported on its own: %q", shape)
	assert.Less(t, replayed, started, "before the turn: %q", shape)
	assert.Contains(t, shape, "notification:Hello.", "the turn's reply is its own: %q", shape)
}
