package app_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/fakeclock"
	"github.com/acpdrive/acpdrive/ports"
)

// placedLauncher counts the launches it prepares.
type placedLauncher struct {
	ports.Launcher
	n atomic.Int32
}

func (c *placedLauncher) Prepare(req ports.LaunchRequest) (ports.Plan, error) {
	c.n.Add(1)
	return c.Launcher.Prepare(req)
}

// unreachableLauncher is a host that can never be reached.
type unreachableLauncher struct{ n atomic.Int32 }

func (u *unreachableLauncher) Prepare(ports.LaunchRequest) (ports.Plan, error) {
	u.n.Add(1)
	return nil, domain.WrapError(domain.KindPortExit, "the host could not be reached", domain.ErrHostUnreachable)
}

// TestFleetPlacesOnTheLeastLoadedHost: sessions go to the host with the
// fewest running (ties to the earlier); a stopped session's seat is given
// back (docs/behaviour.md#fleet).
func TestFleetPlacesOnTheLeastLoadedHost(t *testing.T) {
	t.Parallel()
	o, _, _, _ := agentOptions(t, []string{"--scenario", "echo"})
	a, b := &placedLauncher{Launcher: o.Launcher}, &placedLauncher{Launcher: o.Launcher}
	f, err := app.NewFleet(app.FleetOptions{Hosts: []app.FleetHost{{Name: "a", Launcher: a}, {Name: "b", Launcher: b}}})
	require.NoError(t, err)
	defer func() { assert.NoError(t, f.Close(context.Background())) }()
	o.Launcher = nil
	var sessions []*app.Session
	for range 4 {
		s, err := f.Start(context.Background(), o)
		require.NoError(t, err)
		sessions = append(sessions, s)
	}
	assert.Equal(t, []int32{2, 2}, []int32{a.n.Load(), b.n.Load()})
	require.NoError(t, sessions[1].Stop(context.Background())) // on b
	s, err := f.Start(context.Background(), o)
	require.NoError(t, err)
	sessions = append(sessions, s)
	assert.Equal(t, []int32{2, 3}, []int32{a.n.Load(), b.n.Load()}, "b had the fewest")
	for _, s := range sessions {
		assert.NoError(t, s.Stop(context.Background()))
	}
}

// TestFleetLeavesAnUnreachableHostOutForATime: a host that cannot be
// reached is left out for DownFor (the next host takes the session, a
// person is told once), then tried again.
func TestFleetLeavesAnUnreachableHostOutForATime(t *testing.T) {
	t.Parallel()
	o, _, _, _ := agentOptions(t, []string{"--scenario", "echo"})
	down := &unreachableLauncher{}
	up := &placedLauncher{Launcher: o.Launcher}
	clock := fakeclock.New(epoch)
	var notices []string
	f, err := app.NewFleet(app.FleetOptions{
		Hosts:   []app.FleetHost{{Name: "down", Launcher: down}, {Name: "up", Launcher: up}},
		DownFor: time.Minute, Clock: clock, OnNotice: func(n app.FleetNotice) { notices = append(notices, n.Text()) },
	})
	require.NoError(t, err)
	o.Launcher = nil
	start := func() {
		s, err := f.Start(context.Background(), o)
		require.NoError(t, err)
		require.NoError(t, s.Stop(context.Background()))
	}
	start()
	start()
	assert.Equal(t, int32(1), down.n.Load(), "left out after the first failure")
	assert.Equal(t, int32(2), up.n.Load())
	require.Len(t, notices, 1)
	assert.Contains(t, notices[0], "host down could not be reached")
	clock.Advance(time.Minute)
	start()
	assert.Equal(t, int32(2), down.n.Load(), "tried again once DownFor passed")
}

// TestFleetGivesARuntimeThatCannotShareAProcessEach: a runtime without
// session/close is refused by the Host with ErrCannotShare, and the fleet
// runs its sessions on a process each, saying so once.
func TestFleetGivesARuntimeThatCannotShareAProcessEach(t *testing.T) {
	t.Parallel()
	o, _, _, _ := procOptions(t, nil)
	var notices []string
	var mu sync.Mutex
	f, err := app.NewFleet(app.FleetOptions{Hosts: []app.FleetHost{{Launcher: o.Launcher}}, SessionsPerProcess: 4,
		OnNotice: func(n app.FleetNotice) { mu.Lock(); notices = append(notices, n.Text()); mu.Unlock() }})
	require.NoError(t, err)
	defer func() { assert.NoError(t, f.Close(context.Background())) }()
	o.Launcher = nil
	var pids []int
	for range 2 {
		r := f.Run(context.Background(), o, app.Run{Prompts: []string{"hello"}})
		require.NoError(t, r.Err)
		require.True(t, r.Completed)
		pids = append(pids, r.AgentPID)
	}
	assert.NotEqual(t, pids[0], pids[1], "a process each")
	require.Len(t, notices, 1)
	assert.Contains(t, notices[0], "cannot share a process")
}

// TestFleetSiblingsSurviveASharedProcessCrash: six tasks share one
// process; one task's turn crashes it. The five others are run again on
// processes of their own and complete; only the crasher reports the
// crash (docs/behaviour.md#fleet).
func TestFleetSiblingsSurviveASharedProcessCrash(t *testing.T) {
	t.Parallel()
	o, _, _, _ := procOptions(t, []string{"--scenario", "multi-session"})
	f, err := app.NewFleet(app.FleetOptions{Hosts: []app.FleetHost{{Launcher: o.Launcher}}, SessionsPerProcess: 6})
	require.NoError(t, err)
	defer func() { assert.NoError(t, f.Close(context.Background())) }()
	o.Launcher = nil
	results := make([]app.RunResult, 6)
	var seated sync.WaitGroup
	seated.Add(6)
	var wg sync.WaitGroup
	for i := range 6 {
		prompts := []string{"one", "#slow-accept 1500", "three"}
		if i == 4 {
			prompts = []string{"one", "#crash"}
		}
		wg.Go(func() {
			results[i] = f.Run(context.Background(), o, app.Run{Prompts: prompts,
				OnTurnStart: func(n int, _ string) bool {
					if n == 2 {
						seated.Done() // every task is between its first and second turn
						seated.Wait()
					}
					return true
				}})
		})
	}
	wg.Wait()
	cut := 0
	for i, r := range results {
		require.NoError(t, r.Err, "task %d", i)
		if i == 4 {
			continue
		}
		if len(r.Replacements) > 0 {
			cut++
		}
		last := r.Turns[len(r.Turns)-1].Result
		assert.True(t, r.Completed, "task %d: %s", i, last.Message())
		assert.Len(t, r.Turns, 3)
		for _, rep := range r.Replacements {
			assert.True(t, rep.Isolated, "task %d: a sibling is moved to a process of its own", i)
			assert.False(t, rep.Resumed, "the reference agent cannot resume: the sibling runs fresh")
		}
	}
	assert.Positive(t, cut, "the crash cut the siblings' running turns (every task was between its first and second turn)")
	crasher := results[4]
	assert.False(t, crasher.Completed)
	last := crasher.Turns[len(crasher.Turns)-1].Result
	require.NotNil(t, last.Err)
	assert.Equal(t, domain.KindPortExit, last.Err.Kind)
	assert.Contains(t, crasher.Turns[len(crasher.Turns)-1].RuntimeExit, "crashed on purpose")
	require.Len(t, crasher.Replacements, 1, "the crasher ran its turn once more, alone")
	assert.True(t, crasher.Replacements[0].Isolated)
}

// TestFleetRunRetriesAndCountsEveryAttempt: a rate-limited turn is
// retried after the runtime's retry-after; the run's and the fleet's
// totals count every attempt; the last prompt's result is the run's.
func TestFleetRunRetriesAndCountsEveryAttempt(t *testing.T) {
	t.Parallel()
	o, _, _, _ := agentOptions(t, script(t, "retry-429.json"))
	f, err := app.NewFleet(app.FleetOptions{Hosts: []app.FleetHost{{Launcher: o.Launcher}}})
	require.NoError(t, err)
	o.Launcher = nil
	clock := fakeclock.New(epoch)
	var advancing sync.WaitGroup
	var waits []app.Retry
	r := f.Run(context.Background(), o, app.Run{
		Prompts: []string{"go"}, Retry: app.RetryPolicy{MaxRetries: 2}, Clock: clock,
		OnRetry: func(w app.Retry) {
			waits = append(waits, w)
			advancing.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), waitFor)
				defer cancel()
				if clock.WaitForTimers(ctx, 1) == nil {
					clock.Advance(w.Wait)
				}
			})
		},
	})
	advancing.Wait()
	require.NoError(t, r.Err)
	require.True(t, r.Completed, r.Turns[0].Result.Message())
	require.Len(t, waits, 2)
	assert.Equal(t, 17*time.Second, waits[0].Wait)
	assert.Equal(t, 3, r.Totals.Turns, "every attempt")
	assert.Equal(t, 3, f.Totals().Turns, "every attempt")
	assert.Equal(t, "Done.", r.Turns[0].Result.Reply)
	assert.NoError(t, r.StopErr)
}

// TestRunStopsAtItsCeilings: the turn ceiling stops a run before the next
// prompt.
func TestRunStopsAtItsCeilings(t *testing.T) {
	t.Parallel()
	h := start(t, []string{"--scenario", "echo"})
	var seen []int
	r := app.Run{Prompts: []string{"a", "b", "c"}, Ceilings: app.Ceilings{MaxTurns: 2},
		OnTurn: func(rt app.RunTurn) { seen = append(seen, rt.N) }}.Drive(context.Background(), h.sess)
	assert.False(t, r.Completed)
	assert.Equal(t, app.MsgTurnCeilingReached, r.Stopped)
	assert.Equal(t, []int{1, 2}, seen)
	assert.True(t, strings.HasPrefix(r.Turns[1].Result.Reply, "b"), r.Turns[1].Result.Reply)
}

// stuckLauncher's runtimes never start: Start waits for its context.
type stuckLauncher struct{ starting chan struct{} }

func (l *stuckLauncher) Prepare(ports.LaunchRequest) (ports.Plan, error) { return stuckPlan{l}, nil }

type stuckPlan struct{ l *stuckLauncher }

func (stuckPlan) Target() ports.Target { return ports.Target{} }

func (p stuckPlan) Start(ctx context.Context, _ []string) (ports.Process, error) {
	close(p.l.starting)
	<-ctx.Done()
	return nil, domain.WrapError(domain.KindTurnCancelled, "the start was cancelled", ctx.Err())
}

// TestStopDuringAReplacement: a Stop from another goroutine while a retry
// replaces the session's runtime cancels the replacement's start, waits
// for it and stops the session; the retry reports the replacement that
// did not start (docs/behaviour.md#fleet).
func TestStopDuringAReplacement(t *testing.T) {
	t.Parallel()
	h := start(t, script(t, "retry-429.json"))
	stuck := &stuckLauncher{starting: make(chan struct{})}
	next := h.opts
	next.Launcher = stuck
	var reps []app.Replacement
	done := make(chan retried, 1)
	go func() {
		r := app.Retrier{Policy: app.RetryPolicy{MaxRetries: 1, MaxBackoff: time.Millisecond}, Options: next,
			OnReplace: func(rep app.Replacement) { reps = append(reps, rep) }}
		res, sess, err := r.Turn(context.Background(), h.sess, "#crash")
		done <- retried{res: res, sess: sess, err: err}
	}()
	select {
	case <-stuck.starting:
	case <-time.After(waitFor):
		t.Fatal("the replacement never started")
	}
	require.NoError(t, h.sess.Stop(context.Background()))
	out := <-done
	require.Error(t, out.err)
	assert.Same(t, h.sess, out.sess)
	require.Len(t, reps, 1)
	assert.Error(t, reps[0].Err)
	assert.Equal(t, domain.OutcomeFailed, out.res.Outcome, "the crash that asked for the replacement")
}

// TestHostKey: sessions whose process-scoped options differ never share
// a process; their own options do not matter (docs/behaviour.md#fleet).
func TestHostKey(t *testing.T) {
	t.Parallel()
	base := app.Options{Settings: domain.DefaultSessionSettings(), Workspace: "/a"}
	base.Settings.Command = []string{"agent", "--acp"}
	cases := []struct {
		name   string
		change func(*app.Options)
		same   bool
	}{
		{"the command", func(o *app.Options) { o.Settings.Command = []string{"other"} }, false},
		{"the protocol", func(o *app.Options) { o.Settings.Protocol = domain.ProtocolChoice("2") }, false},
		{"the client name", func(o *app.Options) { o.ClientName = "orchestrator" }, false},
		{"the sandbox", func(o *app.Options) { o.Settings.Sandbox.Enabled = true }, false},
		{"the workspace under a sandbox", func(o *app.Options) { o.Settings.Sandbox.Enabled, o.Workspace = true, "/b" }, false},
		{"the workspace", func(o *app.Options) { o.Workspace = "/b" }, true},
		{"the session to resume", func(o *app.Options) { o.ResumeSessionID = "s-1" }, true},
		{"the event consumer", func(o *app.Options) { o.OnEvent = func(domain.Event) {} }, true},
		{"a turn bound", func(o *app.Options) { o.Settings.TurnTimeout = time.Minute }, true},
	}
	sandboxed := base
	sandboxed.Settings.Sandbox.Enabled = true
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := base
			c.change(&o)
			ref := base
			if c.name == "the workspace under a sandbox" {
				ref = sandboxed
			}
			assert.Equal(t, c.same, app.HostKey(o) == app.HostKey(ref))
		})
	}
}

// TestFleetCapsSessionsPerHost: past every host's cap a start is refused
// with a typed cause.
func TestFleetCapsSessionsPerHost(t *testing.T) {
	t.Parallel()
	o, _, _, _ := agentOptions(t, []string{"--scenario", "echo"})
	f, err := app.NewFleet(app.FleetOptions{Hosts: []app.FleetHost{{Launcher: o.Launcher}}, MaxSessionsPerHost: 1})
	require.NoError(t, err)
	o.Launcher = nil
	s, err := f.Start(context.Background(), o)
	require.NoError(t, err)
	_, err = f.Start(context.Background(), o)
	assert.ErrorIs(t, err, app.ErrFleetFull)
	require.NoError(t, s.Stop(context.Background()))
	s, err = f.Start(context.Background(), o)
	require.NoError(t, err, "the stopped session's seat was given back")
	require.NoError(t, s.Stop(context.Background()))
}
