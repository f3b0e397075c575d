package app_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/fakeclock"
)

// startResult is what app.Start returned.
type startResult struct {
	s   *app.Session
	err error
}

func withCreations(c app.CreationStore) option { return func(o *app.Options) { o.Creations = c } }

// TestContinuationRoutes runs every route on a fake clock: the replay's
// confirmation wait and quiet period pass without real time.
func TestContinuationRoutes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		args        []string
		script      string
		readTimeout time.Duration // real-time bounds (the negative control's)
		route       string
		id          string
		gap         bool
		sent        []string // methods the agent must have received, in order
		notSent     []string
		logs        []string
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
		{name: "load unimplemented", script: "load-unimplemented.json",
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
		{name: "negative control unanswered", script: "control-unanswered.json", readTimeout: 300 * time.Millisecond,
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
			t.Parallel()
			args := c.args
			if c.script != "" {
				args = script(t, c.script)
			}
			rt := c.readTimeout
			if rt == 0 {
				rt = 3 * time.Second
			}
			h := start(t, args, withResume("saved-1"), withReadTimeout(rt), withClock(fakeclock.New(epoch)))
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

// TestReplayIsNotDatedIntoTheNextTurn checks that the message a
// session/load replays is reported with the time of its last chunk, before
// the next turn's session_started.
func TestReplayIsNotDatedIntoTheNextTurn(t *testing.T) {
	t.Parallel()
	clock := fakeclock.New(epoch)
	h := start(t, []string{"--scenario", "load"}, withResume("saved-1"), withClock(clock))
	clock.Advance(50 * time.Millisecond)
	h.turn("next")
	var replayed, started domain.Event
	for _, ev := range h.rec.All() {
		if ev.Message == "(replayed answer)" {
			replayed = ev
		}
		if ev.Type == domain.EventSessionStarted && started.Type == "" {
			started = ev
		}
	}
	require.NotEmpty(t, replayed.Type, "the replayed answer is reported")
	assert.Equal(t, epoch, replayed.Time, "dated at its last chunk")
	assert.True(t, replayed.Time.Before(started.Time), "replayed %v, turn started %v", replayed.Time, started.Time)
}

// TestLoadHoldsUntilTheCreationMinuteHasPassed: the store remembers that
// the session was created at 12:00:30 UTC; loaded at 12:00:40, the load is
// held 20 s, measured on a fake clock.
func TestLoadHoldsUntilTheCreationMinuteHasPassed(t *testing.T) {
	t.Parallel()
	clock := fakeclock.New(epoch.Add(10 * time.Second))
	store := app.NewMemoryCreations()
	store.Remember("saved-1", epoch)
	o, rec, logs, agentLg := agentOptions(t, []string{"--scenario", "load"},
		withClock(clock), withCreations(store), withResume("saved-1"))
	done := make(chan startResult, 1)
	go func() {
		s, err := app.Start(context.Background(), o)
		done <- startResult{s, err}
	}()
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "holding session/load") }, waitFor, time.Millisecond)
	assert.Contains(t, logs.String(), "wait=20s")
	require.NoError(t, clock.WaitForTimers(context.Background(), 1))
	clock.Advance(20*time.Second - time.Millisecond)
	assert.Equal(t, 1, clock.Pending(), "the hold has not ended 1 ms before 12:01:00")
	assert.Empty(t, received(t, agentLg, "session/load"), "held until 12:01:00")
	clock.Advance(time.Millisecond)
	var r startResult
	drive(clock, func() bool {
		select {
		case r = <-done:
			return true
		default:
			return false
		}
	})
	require.NoError(t, r.err)
	h := &harness{t: t, sess: r.s, rec: rec, logs: logs, agentLg: agentLg, opts: o, clock: clock}
	t.Cleanup(h.stop)
	assert.Equal(t, "session/load", h.sess.Route())
	assert.Equal(t, "saved-1", h.sess.ID())
	assert.Len(t, received(t, agentLg, "session/load"), 1)
}

// TestLoadOfAnEarlierMinuteIsNotHeld: a session created in an earlier UTC
// minute, and one this process did not create, are loaded at once.
func TestLoadOfAnEarlierMinuteIsNotHeld(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"earlier", "from-an-earlier-process"} {
		store := app.NewMemoryCreations()
		store.Remember("earlier", epoch.Add(-time.Minute))
		h := start(t, []string{"--scenario", "load"}, withResume(id), withCreations(store), withClock(fakeclock.New(epoch)))
		assert.Equal(t, "session/load", h.sess.Route())
		assert.NotContains(t, h.logs.String(), "holding session/load")
	}
}

// TestCreatedSessionsAreRemembered: session/new records the creation time
// in the injected store when the runtime advertises loadSession, and only
// then: no other session can be loaded.
func TestCreatedSessionsAreRemembered(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		args []string
		want bool
	}{
		{name: "advertises loadSession", args: []string{"--scenario", "load"}, want: true},
		{name: "advertises no loadSession", want: false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			store := app.NewMemoryCreations()
			clock := fakeclock.New(epoch)
			h := start(t, tt.args, withCreations(store), withClock(clock))
			at, ok := store.CreatedAt(h.sess.ID())
			require.Equal(t, tt.want, ok)
			if tt.want {
				assert.Equal(t, epoch, at)
			}
		})
	}
}

// TestMemoryCreationsKeepsTheLatestMinute: entries of an earlier UTC minute
// are dropped once one of a later minute arrives; those of the same minute
// stay.
func TestMemoryCreationsKeepsTheLatestMinute(t *testing.T) {
	t.Parallel()
	minute := epoch.Truncate(time.Minute)
	store := app.NewMemoryCreations()
	store.Remember("a", minute.Add(10*time.Second))
	store.Remember("b", minute.Add(50*time.Second))
	assert.Equal(t, 2, store.Len())
	at, ok := store.CreatedAt("a")
	require.True(t, ok)
	assert.Equal(t, minute.Add(10*time.Second), at)
	store.Remember("c", minute.Add(70*time.Second))
	assert.Equal(t, 1, store.Len())
	_, ok = store.CreatedAt("a")
	assert.False(t, ok, "an entry of an earlier minute is dropped")
	at, ok = store.CreatedAt("c")
	require.True(t, ok)
	assert.Equal(t, minute.Add(70*time.Second), at)
	store.Remember("d", minute.Add(30*time.Second)) // the clock stepped back
	_, ok = store.CreatedAt("c")
	assert.True(t, ok, "an earlier minute drops nothing")
}

func TestCredentialVerification(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		args    []string
		script  string
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
		{name: "prompt refused", script: "prompt-auth-required.json",
			kind: domain.KindCredentialUnverified, message: "the agent runtime refused its credential: Authentication required",
			sent: map[string]int{"session/new": 1, "session/prompt": 1}},
		{name: "early exit keeps its kind", args: []string{"--scenario", "exit-before-init"},
			kind: domain.KindPortExit},
		{name: "not answered", args: []string{"--scenario", "slow-new"}, opts: []option{withReadTimeout(300 * time.Millisecond)},
			kind: domain.KindCredentialUnverified, message: "the agent runtime did not complete a credential verification request: timed out waiting for a response"},
		// A runtime that never answers initialize ends at the verification
		// bound as credential_unverified, not as a cancelled start.
		{name: "initialize never answered", args: []string{"--scenario", "hang-init"},
			opts: []option{withConfig(func(c *domain.SessionSettings) { c.VerificationBound = 700 * time.Millisecond })},
			kind: domain.KindCredentialUnverified, message: "the agent runtime did not complete a credential verification request: no answer within the verification bound of 700ms"},
		{name: "non-retryable kind kept", script: "verify-refusal.json",
			kind: domain.KindTurnRefused},
		{name: "failed delete logged at warn", script: "delete-fails.json",
			sent: map[string]int{"session/delete": 1},
			logs: []string{"level=WARN msg=\"session delete failed; the verification session stays stored by the runtime\""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			args := c.args
			if c.script != "" {
				args = script(t, c.script)
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
// waits for the replay to go quiet. On a fake clock the quiet period cannot
// pass until the test moves time, so the start is still waiting when the
// last replayed chunk arrives (about 60 ms of the agent's own time after
// its response), and the turn started next does not take it for its own.
func TestReplayAfterTheLoadResponseStaysBeforeTheTurn(t *testing.T) {
	t.Parallel()
	clock := fakeclock.New(epoch)
	o, rec, logs, agentLg := agentOptions(t, script(t, "load-replays-after.json"), withResume("saved-1"), withClock(clock))
	done := make(chan startResult, 1)
	go func() {
		s, err := app.Start(context.Background(), o)
		done <- startResult{s, err}
	}()
	require.Eventually(t, func() bool { return strings.Contains(rec.Text(), "The word is apple.") }, waitFor, time.Millisecond)
	select {
	case <-done:
		t.Fatal("the start returned before the replay went quiet")
	default:
	}
	var r startResult
	drive(clock, func() bool {
		select {
		case r = <-done:
			return true
		default:
			return false
		}
	})
	require.NoError(t, r.err)
	h := &harness{t: t, sess: r.s, rec: rec, logs: logs, agentLg: agentLg, opts: o, clock: clock}
	t.Cleanup(h.stop)
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
