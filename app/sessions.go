package app

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
)

// SessionEntry is one session a runtime keeps, as session/list reports it
// (docs/behaviour.md#sessions-as-resources-and-child-sessions). Its JSON
// form is one entry of the CLI's `sessions list --json`.
type SessionEntry struct {
	// ID is the session's id, the one `run --resume` and `run --fork` take.
	ID string `json:"session_id"`
	// CWD is the workspace the session ran in.
	CWD string `json:"cwd"`
	// Title is the runtime's title for the session, "" when it gave none.
	Title string `json:"title,omitempty"`
	// UpdatedAt is when the runtime last changed the session (ISO 8601 as
	// the runtime sent it), "" when not reported.
	UpdatedAt string `json:"updated_at,omitempty"`
	// AdditionalDirectories are the session's further workspace roots.
	AdditionalDirectories []string `json:"additional_directories,omitempty"`
}

// maxListPages bounds a listing: a runtime whose cursors never end fails
// it instead of holding the caller forever.
const maxListPages = 1000

// notAdvertised is the error of a session call the runtime does not
// advertise: agent_not_found (not retryable: the same runtime gives the
// same answer again), and nothing was sent.
func notAdvertised(capability, method string) error {
	return domain.NewError(domain.KindAgentNotFound,
		fmt.Sprintf("the runtime does not advertise sessionCapabilities.%s; %s was not sent", capability, method)).
		WithReason(domain.ReasonNotOffered)
}

// ListSessions returns every session the runtime keeps, every page of
// session/list followed through its cursors, in the runtime's order. A
// non-empty cwd asks the runtime for the sessions of that directory only.
// Each page is bounded by read_timeout_ms. A runtime that does not
// advertise sessionCapabilities.list gets nothing and the error is
// agent_not_found; a page the runtime refuses is response_error, a cursor
// that repeats (or more than 1000 pages) response_error too.
func (s *Session) ListSessions(ctx context.Context, cwd string) ([]SessionEntry, error) {
	return s.conn.listSessions(ctx, cwd)
}

// listSessions is ListSessions over the connection.
func (c *connection) listSessions(ctx context.Context, cwd string) ([]SessionEntry, error) {
	if !c.agent.Advertised.List {
		return nil, notAdvertised("list", acpwire.MethodSessionList)
	}
	out := []SessionEntry{}
	seen := map[string]bool{}
	req := acpwire.ListSessionsRequest{CWD: cwd}
	for page := 1; ; page++ {
		callCtx, cancel := context.WithTimeout(ctx, c.opts.Settings.EffectiveReadTimeout())
		resp, err := c.rt.client.ListSessions(callCtx, req)
		cancel()
		if err != nil {
			return out, c.startupError(ctx, acpwire.MethodSessionList, err)
		}
		for _, info := range resp.Sessions {
			out = append(out, sessionEntry(info))
		}
		if resp.NextCursor == nil || *resp.NextCursor == "" {
			c.log.Debug("sessions listed", "pages", page, "sessions", len(out))
			return out, nil
		}
		next := *resp.NextCursor
		if seen[next] || page >= maxListPages {
			return out, domain.NewError(domain.KindResponseError,
				fmt.Sprintf("session/list: the runtime's cursors do not end (page %d, cursor %q)", page, next))
		}
		seen[next] = true
		req.Cursor = next
	}
}

func sessionEntry(info acpwire.SessionInfo) SessionEntry {
	e := SessionEntry{ID: info.SessionID, CWD: info.CWD, AdditionalDirectories: info.AdditionalDirectories}
	if info.Title != nil {
		e.Title = *info.Title
	}
	if info.UpdatedAt != nil {
		e.UpdatedAt = *info.UpdatedAt
	}
	return e
}

// DeleteSession removes the session id from the runtime's list through
// session/delete, bounded by read_timeout_ms. A runtime that does not
// advertise sessionCapabilities.delete gets nothing and the error is
// agent_not_found; an empty id is response_error before anything is sent.
// Deleting the session this Session runs is the runtime's affair (the
// schema leaves it implementation-defined).
func (s *Session) DeleteSession(ctx context.Context, id string) error {
	return s.conn.deleteSession(ctx, id)
}

// deleteSession is DeleteSession over the connection.
func (c *connection) deleteSession(ctx context.Context, id string) error {
	if !c.agent.Advertised.Delete {
		return notAdvertised("delete", acpwire.MethodSessionDelete)
	}
	if strings.TrimSpace(id) == "" {
		return domain.NewError(domain.KindResponseError, "empty session id; session/delete was not sent")
	}
	callCtx, cancel := context.WithTimeout(ctx, c.opts.Settings.EffectiveReadTimeout())
	err := c.rt.client.DeleteSession(callCtx, id)
	cancel()
	if err != nil {
		return c.startupError(ctx, acpwire.MethodSessionDelete, err)
	}
	c.log.Info("agent session deleted", "session_id", id, "agent_pid", c.rt.pid())
	return nil
}

// ForkedFrom is the session this one was forked from (Options.ForkSessionID)
// when the start forked it, "" otherwise.
func (s *Session) ForkedFrom() string {
	if s.res.route != acpwire.MethodSessionFork {
		return ""
	}
	return s.opts.ForkSessionID
}

// forkSession creates the session from Options.ForkSessionID's history
// through session/fork. It fails the start when the runtime does not
// advertise fork (nothing sent) or refuses it: a fork that fell back to a
// fresh session would lose the history it was asked for.
func (s *Session) forkSession(ctx context.Context) error {
	from := s.opts.ForkSessionID
	if !s.res.agent.Advertised.Fork {
		return notAdvertised("fork", acpwire.MethodSessionFork)
	}
	callCtx, cancel := context.WithTimeout(ctx, s.opts.Settings.EffectiveReadTimeout())
	resp, err := s.conn.rt.client.ForkSession(callCtx, acpwire.ForkSessionRequest{
		SessionID: from, CWD: s.cwd(), MCPServers: s.encodeServers(),
		AdditionalDirectories: s.opts.Settings.Session.AdditionalDirectories, SystemPrompt: s.systemPrompt(),
	})
	cancel()
	if err != nil {
		return s.startupError(ctx, acpwire.MethodSessionFork, err)
	}
	if resp.SessionID == "" {
		return domain.NewError(domain.KindResponseError, "session/fork answered no sessionId")
	}
	s.res.route = acpwire.MethodSessionFork
	s.adopt(resp.SessionID)
	s.res.created = &resp
	// The fork starts with the history it copied: measured like a
	// continued session, from what its record already holds.
	s.conn.meter.opened(resp.SessionID, true)
	if s.res.agent.Advertised.LoadSession {
		s.opts.Creations.Remember(resp.SessionID, s.clock.Now())
	}
	s.log.Info("agent session forked", "session_id", resp.SessionID, "forked_from", from, "agent_pid", s.PID())
	// A fork is configured like a new session, before its first prompt
	// (docs/behaviour.md#session-configuration).
	return s.configure(ctx, sessionOffer(resp.Modes, resp.ConfigOptions, resp.Models))
}

// SessionStore is a started runtime without a session of its own, for
// the calls over the sessions it keeps: listing and deleting them
// (docs/behaviour.md#sessions-as-resources-and-child-sessions). It is a
// connection with no session on it, so nothing is added to what it lists.
type SessionStore struct {
	c    *connection
	once sync.Once
	done chan struct{}
	err  error
}

// OpenSessionStore starts the runtime and performs the handshake, as Start
// does, but creates no session. Failures are those of Start's first steps
// (docs/behaviour.md#start-up), reported as a startup_failed event to
// OnEvent and the observers; whatever was started is torn down.
func OpenSessionStore(ctx context.Context, opts Options) (*SessionStore, error) {
	opts, err := opts.resolved()
	if err != nil {
		return nil, refused(opts, err)
	}
	opts.MeasurementSources = nil // nothing to measure
	c := newConnection(opts, false)
	if err := c.open(ctx); err != nil {
		if serr := c.shutdown(); serr != nil {
			c.log.Debug("teardown after a failed start reported", "error", serr)
		}
		return nil, refused(opts, err)
	}
	return &SessionStore{c: c, done: make(chan struct{})}, nil
}

// List is Session.ListSessions on the store's runtime.
func (st *SessionStore) List(ctx context.Context, cwd string) ([]SessionEntry, error) {
	return st.c.listSessions(ctx, cwd)
}

// Delete is Session.DeleteSession on the store's runtime.
func (st *SessionStore) Delete(ctx context.Context, id string) error {
	return st.c.deleteSession(ctx, id)
}

// AgentInfo returns what the handshake reported about the runtime.
func (st *SessionStore) AgentInfo() domain.AgentInfo { return st.c.agent }

// PID is the local process acpdrive watches, as Session.PID.
func (st *SessionStore) PID() int { return st.c.rt.pid() }

// Stop tears the runtime down in the fixed order, as Session.Stop (no
// session is closed: the store has none), returning by ctx's deadline
// while the teardown goes on.
func (st *SessionStore) Stop(ctx context.Context) error {
	st.once.Do(func() {
		go func() {
			defer close(st.done)
			st.err = st.c.shutdown()
		}()
	})
	select {
	case <-st.done:
		return st.err
	case <-ctx.Done():
		return fmt.Errorf("app: stop did not finish before its context ended; teardown goes on: %w", ctx.Err())
	}
}
