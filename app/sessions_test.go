package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/refagent"
)

// loggedParams decodes the params of a request the reference agent logged.
func loggedParams(t *testing.T, r refagent.LogRecord) map[string]any {
	t.Helper()
	var m struct {
		Params map[string]any `json:"params"`
	}
	require.NoError(t, json.Unmarshal(r.Message, &m))
	return m.Params
}

// openStore opens a session store on the reference agent with args; cleanup
// stops it.
func openStore(t *testing.T, args []string) (*app.SessionStore, string) {
	t.Helper()
	o, _, logs, agentLg := agentOptions(t, args)
	st, err := app.OpenSessionStore(context.Background(), o)
	require.NoError(t, err, logs.String())
	t.Cleanup(func() { assert.NoError(t, st.Stop(context.Background())) })
	return st, agentLg
}

// TestListSessionsFollowsEveryPage: every page of session/list is asked
// for through the cursor the previous one named, the cwd filter on each,
// and the entries come back in the runtime's order; the store creates no
// session of its own.
func TestListSessionsFollowsEveryPage(t *testing.T) {
	t.Parallel()
	st, agentLg := openStore(t, script(t, "sessions-paged.json"))
	got, err := st.List(context.Background(), "/w")
	require.NoError(t, err)
	assert.Equal(t, []app.SessionEntry{
		{ID: "s-1", CWD: "/w/one", Title: "first run", UpdatedAt: "2026-12-01T10:00:00Z"},
		{ID: "s-2", CWD: "/w/two", AdditionalDirectories: []string{"/w/extra"}},
		{ID: "s-3", CWD: "/w/two", Title: "third"},
	}, got)
	calls := received(t, agentLg, "session/list")
	require.Len(t, calls, 2)
	assert.Equal(t, map[string]any{"cwd": "/w"}, loggedParams(t, calls[0]))
	assert.Equal(t, map[string]any{"cwd": "/w", "cursor": "page-2"}, loggedParams(t, calls[1]))
	assert.Empty(t, received(t, agentLg, "session/new"), "listing creates no session")
}

// TestListSessionsOnASession: a started Session lists too, and without a
// cwd filter sends {} as the schema's first page.
func TestListSessionsOnASession(t *testing.T) {
	t.Parallel()
	h := start(t, script(t, "sessions-paged.json"))
	got, err := h.sess.ListSessions(context.Background(), "")
	require.NoError(t, err)
	assert.Len(t, got, 3)
	calls := received(t, h.agentLg, "session/list")
	require.Len(t, calls, 2)
	assert.Empty(t, loggedParams(t, calls[0]))
}

// TestListSessionsCursorThatRepeats: a runtime whose cursors never end
// fails the listing response_error instead of holding the caller.
func TestListSessionsCursorThatRepeats(t *testing.T) {
	t.Parallel()
	st, agentLg := openStore(t, script(t, "sessions-cursor-loop.json"))
	_, err := st.List(context.Background(), "")
	require.Error(t, err)
	assert.ErrorIs(t, err, domain.KindResponseError)
	assert.Contains(t, err.Error(), `cursors do not end`)
	assert.Len(t, received(t, agentLg, "session/list"), 2, "the repeated cursor is noticed on the second page")
}

// TestSessionCallsNotAdvertised: list, delete and fork on a runtime that
// does not advertise them fail agent_not_found naming the capability, and
// nothing reaches the runtime.
func TestSessionCallsNotAdvertised(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, method, capability string
		call                     func(t *testing.T, agentLg *string) error
	}{
		{"list", "session/list", "sessionCapabilities.list", func(t *testing.T, lg *string) error {
			st, agentLg := openStore(t, nil)
			*lg = agentLg
			_, err := st.List(context.Background(), "")
			return err
		}},
		{"delete", "session/delete", "sessionCapabilities.delete", func(t *testing.T, lg *string) error {
			st, agentLg := openStore(t, nil)
			*lg = agentLg
			return st.Delete(context.Background(), "s-1")
		}},
		{"fork", "session/fork", "sessionCapabilities.fork", func(t *testing.T, lg *string) error {
			o, _, _, agentLg := agentOptions(t, nil)
			*lg = agentLg
			o.ForkSessionID = "s-1"
			s, err := app.Start(context.Background(), o)
			assert.Nil(t, s)
			assert.Empty(t, received(t, agentLg, "session/new"), "a fork that cannot be made does not fall back")
			return err
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var agentLg string
			err := c.call(t, &agentLg)
			require.Error(t, err)
			assert.ErrorIs(t, err, domain.KindAgentNotFound)
			assert.Contains(t, err.Error(), c.capability)
			assert.Contains(t, err.Error(), c.method+" was not sent")
			assert.Empty(t, received(t, agentLg, c.method), "nothing sent")
		})
	}
}

// TestDeleteSession: session/delete names the id; an empty id is refused
// before anything is sent; a runtime's refusal is response_error.
func TestDeleteSession(t *testing.T) {
	t.Parallel()
	st, agentLg := openStore(t, []string{"--scenario", "advertise-all"})
	require.NoError(t, st.Delete(context.Background(), "s-9"))
	calls := received(t, agentLg, "session/delete")
	require.Len(t, calls, 1)
	assert.Equal(t, map[string]any{"sessionId": "s-9"}, loggedParams(t, calls[0]))

	err := st.Delete(context.Background(), " ")
	assert.ErrorIs(t, err, domain.KindResponseError)
	assert.Len(t, received(t, agentLg, "session/delete"), 1, "an empty id is not sent")

	refusing, _ := openStore(t, script(t, "delete-fails.json"))
	err = refusing.Delete(context.Background(), "s-1")
	assert.ErrorIs(t, err, domain.KindResponseError)
	assert.Contains(t, err.Error(), "storage is read-only")
}

// TestForkSession: a start with ForkSessionID sends session/fork (no
// session/new), runs the new session, and names both ids.
func TestForkSession(t *testing.T) {
	t.Parallel()
	h := start(t, script(t, "sessions-paged.json"), func(o *app.Options) { o.ForkSessionID = "s-1" })
	assert.Equal(t, "fork-1", h.sess.ID())
	assert.Equal(t, "s-1", h.sess.ForkedFrom())
	assert.Equal(t, "session/fork", h.sess.Route())
	calls := received(t, h.agentLg, "session/fork")
	require.Len(t, calls, 1)
	p := loggedParams(t, calls[0])
	assert.Equal(t, "s-1", p["sessionId"])
	assert.Equal(t, h.opts.Workspace, p["cwd"])
	assert.Equal(t, []any{}, p["mcpServers"])
	assert.Empty(t, received(t, h.agentLg, "session/new"))
	res := h.turn("hello")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	prompts := received(t, h.agentLg, "session/prompt")
	require.Len(t, prompts, 1)
	assert.Equal(t, "fork-1", loggedParams(t, prompts[0])["sessionId"])
}

// TestForkRefused: a runtime that refuses the fork fails the start
// response_error with its message; no fresh session stands in for it.
func TestForkRefused(t *testing.T) {
	t.Parallel()
	o, rec, _, agentLg := agentOptions(t, script(t, "fork-refused.json"))
	o.ForkSessionID = "gone"
	s, err := app.Start(context.Background(), o)
	require.Error(t, err)
	assert.Nil(t, s)
	assert.ErrorIs(t, err, domain.KindResponseError)
	assert.Contains(t, err.Error(), "no such session")
	assert.Empty(t, received(t, agentLg, "session/new"))
	assert.NotEmpty(t, rec.OfType(domain.EventStartupFailed))
}

// TestForkExcludesResume: both at once is a programmer's mistake.
func TestForkExcludesResume(t *testing.T) {
	t.Parallel()
	o, _, _, _ := agentOptions(t, nil)
	o.ForkSessionID, o.ResumeSessionID = "a", "b"
	_, err := app.Start(context.Background(), o)
	var oe *app.OptionsError
	require.True(t, errors.As(err, &oe), "%v", err)
	assert.Equal(t, "ForkSessionID", oe.Field)
}
