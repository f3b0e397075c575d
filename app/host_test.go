package app_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/eventrec"
	"github.com/acpdrive/acpdrive/internal/testsupport/proctest"
)

// hostSessions starts n sessions concurrently on h, each with its own
// recorder.
func hostSessions(t *testing.T, h *app.Host, o app.Options, n int) ([]*app.Session, []*eventrec.Recorder) {
	t.Helper()
	sessions := make([]*app.Session, n)
	recs := make([]*eventrec.Recorder, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		recs[i] = &eventrec.Recorder{}
		so := o
		so.OnEvent, so.OnAgentText = recs[i].Add, recs[i].AddText
		wg.Add(1)
		go func() {
			defer wg.Done()
			sessions[i], errs[i] = h.Start(context.Background(), so)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	return sessions, recs
}

// TestHostTenSessionsOnOneProcess: ten sessions on one reference-agent
// process run two turns each concurrently, each session's events and
// reply its own; one Stop leaves the others running; killing the process
// ends every session's turn port_exit with the runtime's exit status
// (docs/behaviour.md#runtime-host).
func TestHostTenSessionsOnOneProcess(t *testing.T) {
	t.Parallel()
	o, _, logs, _ := procOptions(t, []string{"--scenario", "multi-session"})
	h, err := app.NewHost(o, app.HostOptions{})
	require.NoError(t, err)
	defer func() { assert.NoError(t, h.Close(context.Background())) }()

	sessions, recs := hostSessions(t, h, o, 10)
	pid := sessions[0].PID()
	require.NotZero(t, pid)
	ids := map[string]bool{}
	for _, s := range sessions {
		assert.Equal(t, pid, s.PID(), "every session is on the one process")
		ids[s.ID()] = true
	}
	require.Len(t, ids, 10, "each session has its own id")
	require.Equal(t, []app.HostProcess{{PID: pid, Sessions: 10}}, h.Processes())

	turns := func(set []*app.Session, n int) {
		var wg sync.WaitGroup
		for i, s := range set {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range n {
					prompt := fmt.Sprintf("session %s turn %d", s.ID(), k)
					res := s.Turn(context.Background(), prompt)
					if assert.Nil(t, res.Err, logs.String()) {
						assert.Equal(t, prompt, res.Reply, "session %d", i)
					}
				}
			}()
		}
		wg.Wait()
	}
	turns(sessions, 2)
	for i, rec := range recs {
		id := sessions[i].ID()
		for _, ev := range rec.All() {
			if ev.SessionID != "" {
				assert.Equal(t, id, ev.SessionID, "no event of another session")
			}
		}
		assert.Contains(t, rec.Text(), "session "+id+" turn 1")
		assert.Len(t, rec.OfType(domain.EventSessionStarted), 2)
		// Sent right after session/new's answer, before the route was
		// taken: held, then delivered to its session alone.
		if cmds := rec.OfType(domain.EventCommandsAvailable); assert.Len(t, cmds, 1) {
			assert.Equal(t, []domain.Command{{Name: "compact"}}, cmds[0].Commands)
		}
	}

	// One Stop closes that session only.
	require.NoError(t, sessions[0].Stop(context.Background()))
	assert.Equal(t, domain.KindTurnCancelled, sessions[0].Turn(context.Background(), "after").Err.Kind)
	turns(sessions[1:], 1)
	assert.Equal(t, []app.HostProcess{{PID: pid, Sessions: 9}}, h.Processes())

	// The process dies under running turns: each ends port_exit.
	var wg sync.WaitGroup
	results := make([]domain.TurnResult, len(sessions)-1)
	for i, s := range sessions[1:] {
		wg.Add(1)
		go func() { defer wg.Done(); results[i] = s.Turn(context.Background(), "#no-response") }()
	}
	for _, rec := range recs[1:] {
		require.Eventually(t, func() bool { return len(rec.OfType(domain.EventSessionStarted)) == 4 }, waitFor, 5*time.Millisecond)
	}
	killProcess(t, pid)
	wg.Wait()
	for _, res := range results {
		if assert.NotNil(t, res.Err) {
			assert.Equal(t, domain.KindPortExit, res.Err.Kind, res.Err.Message)
		}
	}
	text, ok := sessions[1].RuntimeExit()
	assert.True(t, ok)
	assert.Contains(t, text, "signal")
	require.Eventually(t, func() bool { return len(h.Processes()) == 0 }, waitFor, 5*time.Millisecond,
		"a dead process carries no new session")
}

// TestHostRefusesARuntimeWithoutClose: a runtime that does not advertise
// session/close cannot share its process (docs/behaviour.md#runtime-host).
func TestHostRefusesARuntimeWithoutClose(t *testing.T) {
	t.Parallel()
	o, _, _, _ := procOptions(t, nil)
	h, err := app.NewHost(o, app.HostOptions{})
	require.NoError(t, err)
	defer func() { assert.NoError(t, h.Close(context.Background())) }()
	_, err = h.Start(context.Background(), o)
	var ae *domain.AgentError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, domain.KindAgentNotFound, ae.Kind)
	assert.Equal(t, domain.ReasonNotOffered, ae.Reason)
	assert.Equal(t, app.MsgHostNeedsClose, ae.Message)
	assert.ErrorIs(t, err, app.ErrCannotShare, "the reason is typed")
}

// TestHostCapsSessionsPerProcess: a process carries at most its cap; the
// next session gets a process of its own.
func TestHostCapsSessionsPerProcess(t *testing.T) {
	t.Parallel()
	o, _, _, _ := procOptions(t, []string{"--scenario", "multi-session"})
	h, err := app.NewHost(o, app.HostOptions{SessionsPerProcess: 2, MaxProcesses: 2})
	require.NoError(t, err)
	defer func() { assert.NoError(t, h.Close(context.Background())) }()
	sessions, _ := hostSessions(t, h, o, 3)
	pids := map[int]int{}
	for _, s := range sessions {
		pids[s.PID()]++
	}
	assert.Len(t, pids, 2)
	_, err = h.Start(context.Background(), o)
	_, err2 := h.Start(context.Background(), o)
	require.True(t, err == nil || err2 == nil)
	var ae *domain.AgentError
	require.ErrorAs(t, errorsJoin(err, err2), &ae)
	assert.Equal(t, app.MsgHostFull, ae.Message)
}

func errorsJoin(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// TestHostKeepsAProcessWarm: a process whose last session stopped is kept
// for HostOptions.KeepWarm, and the next session is seated on it; without
// keep-warm it is torn down with its last session.
func TestHostKeepsAProcessWarm(t *testing.T) {
	t.Parallel()
	for _, warm := range []time.Duration{time.Hour, 0} {
		o, _, _, _ := procOptions(t, []string{"--scenario", "multi-session"})
		h, err := app.NewHost(o, app.HostOptions{KeepWarm: warm})
		require.NoError(t, err)
		first, err := h.Start(context.Background(), o)
		require.NoError(t, err)
		pid := first.PID()
		require.NoError(t, first.Stop(context.Background()))
		if warm == 0 {
			assert.Empty(t, h.Processes(), "stopped with its last session")
			proctest.WaitGroupEmpty(t, pid, waitFor)
		} else {
			assert.Equal(t, []app.HostProcess{{PID: pid, Sessions: 0}}, h.Processes(), "kept warm")
			second, err := h.Start(context.Background(), o)
			require.NoError(t, err)
			assert.Equal(t, pid, second.PID(), "seated on the warm process")
			assert.Equal(t, "hello", second.Turn(context.Background(), "hello").Reply)
		}
		require.NoError(t, h.Close(context.Background()))
		proctest.WaitGroupEmpty(t, pid, waitFor)
	}
}

// TestHostOtherProcessesGoOn: a process that dies ends its own sessions
// only; a session on another process of the host goes on, and the next
// session gets a new process (docs/behaviour.md#runtime-host).
func TestHostOtherProcessesGoOn(t *testing.T) {
	t.Parallel()
	o, _, _, _ := procOptions(t, []string{"--scenario", "multi-session"})
	h, err := app.NewHost(o, app.HostOptions{SessionsPerProcess: 1})
	require.NoError(t, err)
	defer func() { assert.NoError(t, h.Close(context.Background())) }()
	sessions, _ := hostSessions(t, h, o, 2)
	dead, alive := sessions[0], sessions[1]
	require.NotEqual(t, dead.PID(), alive.PID())
	killProcess(t, dead.PID())
	res := dead.Turn(context.Background(), "after the kill")
	require.NotNil(t, res.Err)
	assert.Equal(t, domain.KindPortExit, res.Err.Kind)
	assert.Equal(t, "still here", alive.Turn(context.Background(), "still here").Reply)
	require.Eventually(t, func() bool { return len(h.Processes()) == 1 }, waitFor, 5*time.Millisecond)
	third, err := h.Start(context.Background(), o)
	require.NoError(t, err)
	assert.NotEqual(t, dead.PID(), third.PID())
	assert.Equal(t, "new", third.Turn(context.Background(), "new").Reply)
	require.NoError(t, dead.Stop(context.Background()))
	proctest.WaitGroupEmpty(t, dead.PID(), waitFor)
}

// killProcess kills process pid at once (SIGKILL on Unix).
func killProcess(t *testing.T, pid int) {
	t.Helper()
	p, err := os.FindProcess(pid)
	require.NoError(t, err)
	require.NoError(t, p.Kill())
}

// TestHostRoutesRequestsOfANewSession: a request the runtime sends for a
// session right after session/new's answer, before the session's start
// took its route, is held for that session and decided by it as its own;
// a request naming a session the runtime has not announced yet (sent
// before the answer, and waited for) is refused -32602 at once, the first
// session's too, when no route exists to answer through
// (docs/behaviour.md#runtime-host).
func TestHostRoutesRequestsOfANewSession(t *testing.T) {
	t.Parallel()
	const n = 10
	o, _, _, agentLg := procOptions(t, []string{"--scenario", "multi-session-early-requests"})
	h, err := app.NewHost(o, app.HostOptions{SessionsPerProcess: n})
	require.NoError(t, err)
	defer func() { assert.NoError(t, h.Close(context.Background())) }()
	sessions, recs := hostSessions(t, h, o, n)

	for i, rec := range recs {
		require.Eventually(t, func() bool { return len(rec.OfType(domain.EventPermissionDecision)) == 1 }, waitFor, 5*time.Millisecond,
			"session %d decided the request sent right after its answer", i)
		ev := rec.OfType(domain.EventPermissionDecision)[0]
		require.NotNil(t, ev.Permission)
		assert.Equal(t, sessions[i].ID(), ev.Permission.Request.SessionID, "session %d: its own request", i)
		assert.Equal(t, "early", ev.Permission.Request.ToolCallID)
		assert.Equal(t, domain.PermissionParent, ev.Permission.Request.Session, "decided as the session's own request")
	}
	require.Eventually(t, func() bool { return len(received(t, agentLg, "session/request_permission")) == n }, waitFor, 5*time.Millisecond)
	for _, r := range received(t, agentLg, "session/request_permission") {
		assert.NotContains(t, string(r.Message), `"error"`, "answered by its session: %s", r.Message)
	}
	early := received(t, agentLg, "_test/early")
	require.Len(t, early, n, "every request sent before its session was announced was answered")
	for _, r := range early {
		assert.Contains(t, string(r.Message), `"code":-32602`, "refused: %s", r.Message)
	}
}
