package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpclient"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

// maxChildren bounds the child sessions followed at once, and the records
// kept of them; a runtime that announces more cannot grow memory without
// bound (docs/behaviour.md#bounds). Only children whose work has not ended
// count: an ended child (idle) leaves the count, and its record is
// forgotten, oldest end first, when a new child needs the room. A child
// past the bound is not followed: its updates are dropped as any foreign
// session's.
const maxChildren = 256

// ChildSession is one child session a session follows: a subagent the
// runtime runs as a session of its own
// (docs/behaviour.md#sessions-as-resources-and-child-sessions).
type ChildSession struct {
	// ID is the child's session id; ParentID the session that launched it.
	ID       string `json:"session_id"`
	ParentID string `json:"parent_session_id"`
	// CanCancel reports whether the runtime lets session/cancel name it.
	CanCancel bool `json:"can_cancel"`
	domain.ChildInfo
	// Context is the child's latest usage_update (its context use, and
	// its cumulative cost when the runtime sent one): the child's own
	// figures, never the parent's (docs/behaviour.md#token-accounting);
	// nil before any.
	Context *domain.ContextUsage `json:"context,omitempty"`
}

// children is the registry of a session's child sessions: each has its
// own event stream (its message accumulator, its tool calls, its
// once-per-session notices), whose events reach the session's sink
// stamped with the child's id and its parent's. Its methods run on the
// connection's reader goroutine, except snapshot, get and the cancels.
type children struct {
	root *eventStream
	log  *slog.Logger

	mu    sync.Mutex
	byID  map[string]*child
	ended uint64 // counts the ends of children's work, to forget the oldest first
}

// child is one followed child session: a session of its own, with its own
// event stream (accumulator, tool calls, ledger).
type child struct {
	ChildSession
	stream *eventStream
	// endedAt orders the children whose work ended (idle); 0 while it
	// runs.
	endedAt uint64
}

func newChildren(root *eventStream, log *slog.Logger) *children {
	return &children{root: root, log: log, byID: make(map[string]*child)}
}

// get returns the child id, nil when it is not followed.
func (c *children) get(id string) *child {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byID[id]
}

// subagent handles one subagent_update sent on session parent: the first
// for a child announces it (child_started), a later one with a changed
// state reports it (child_state).
func (c *children) subagent(parent string, u *acpwire.SubagentUpdate, now time.Time) {
	c.mu.Lock()
	ch, known := c.byID[u.SessionID]
	if !known {
		if !c.roomLocked() {
			c.mu.Unlock()
			c.log.Debug("dropped a child session: too many followed at once", "child_session_id", u.SessionID, "max_children", maxChildren)
			return
		}
		ch = &child{ChildSession: ChildSession{ID: u.SessionID, ParentID: parent}}
		ch.stream = c.root.childStream(ch)
		c.byID[u.SessionID] = ch
	}
	before := ch.ChildInfo
	if u.Title != nil {
		ch.Title = domain.TruncateRunes(*u.Title, domain.MessageCap)
	}
	if u.Description != nil {
		ch.Description = domain.TruncateRunes(*u.Description, domain.MessageCap)
	}
	if u.Capabilities != nil {
		ch.CanCancel = u.Capabilities.CanCancel()
	}
	if st := u.State; st != nil {
		c.setStateLocked(ch, st)
	}
	info := ch.ChildInfo
	c.mu.Unlock()
	switch {
	case !known:
		c.log.Info("child session announced", "child_session_id", u.SessionID, "parent_session_id", parent, "title", info.Title)
		c.emit(ch, domain.Event{Type: domain.EventChildStarted, Time: now, Message: childTitle(info), Title: info.Title}, info)
	default:
		c.changed(ch, before, info, now)
	}
	c.root.activity(now)
}

// roomLocked reports whether a new child may be followed: fewer than
// maxChildren are working, and a record is free or the oldest ended
// child's is forgotten for it. c.mu must be held.
func (c *children) roomLocked() bool {
	if len(c.byID) < maxChildren {
		return true
	}
	var oldest *child
	for _, ch := range c.byID {
		if ch.endedAt != 0 && (oldest == nil || ch.endedAt < oldest.endedAt) {
			oldest = ch
		}
	}
	if oldest == nil {
		return false
	}
	delete(c.byID, oldest.ID)
	c.log.Debug("forgot an ended child session to follow a new one", "child_session_id", oldest.ID, "max_children", maxChildren)
	return true
}

// setStateLocked records the child's work state; idle ends its work.
// c.mu must be held.
func (c *children) setStateLocked(ch *child, st *acpwire.SubagentState) {
	ch.State, ch.StopReason, ch.Error = st.State, st.StopReason, ""
	if st.Error != nil {
		ch.Error = domain.TruncateRunes(st.Error.Message, domain.MessageCap)
	}
	switch {
	case st.State != domain.ChildIdle:
		ch.endedAt = 0
	case ch.endedAt == 0:
		c.ended++
		ch.endedAt = c.ended
	}
}

// changed reports a change of the child's state as child_state. The
// child's message so far is reported before it, and when its work ended
// (idle) its open tool calls are forgotten: they end with the child's
// work, not with the parent's turn
// (docs/behaviour.md#sessions-as-resources-and-child-sessions).
func (c *children) changed(ch *child, before, info domain.ChildInfo, now time.Time) {
	if info.State == before.State && info.StopReason == before.StopReason && info.Error == before.Error {
		return
	}
	ch.stream.flush()
	if info.State == domain.ChildIdle {
		ch.stream.endTurn()
	}
	c.log.Debug("child session state", "child_session_id", ch.ID, "state", info.State, "stop_reason", info.StopReason)
	c.emit(ch, domain.Event{Type: domain.EventChildState, Time: now, Message: domain.ChildStateText(info)}, info)
}

// ownState records a state the child reported on its own session (a v2
// child's own state, stateturn.go childState) as a subagent_update's state is.
func (c *children) ownState(ch *child, st *acpwire.SubagentState, now time.Time) {
	c.mu.Lock()
	before := ch.ChildInfo
	c.setStateLocked(ch, st)
	info := ch.ChildInfo
	c.mu.Unlock()
	c.changed(ch, before, info, now)
	c.root.activity(now)
}

// childTitle is the message of child_started: its title, else its
// description, else "subagent".
func childTitle(info domain.ChildInfo) string {
	switch {
	case info.Title != "":
		return info.Title
	case info.Description != "":
		return info.Description
	}
	return "subagent"
}

func (c *children) emit(ch *child, ev domain.Event, info domain.ChildInfo) {
	ev.SessionID, ev.ParentSessionID, ev.Child = ch.ID, ch.ParentID, &info
	c.root.emit(ev)
}

// snapshot lists the followed children in announcement order of their ids.
func (c *children) snapshot() []ChildSession {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]ChildSession, 0, len(c.byID))
	for _, ch := range c.byID {
		cs := ch.ChildSession
		cs.Context = ch.stream.ledger.latest()
		out = append(out, cs)
	}
	slices.SortFunc(out, func(a, b ChildSession) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	return out
}

// endTurn ends the parent turn for every child: its accumulated message
// is reported. Its open tool calls stay open: a child's work is not the
// parent's turn, and a call that ends in a later turn is reported whole.
func (c *children) endTurn() {
	if c == nil {
		return
	}
	c.mu.Lock()
	streams := make([]*eventStream, 0, len(c.byID))
	for _, ch := range c.byID {
		streams = append(streams, ch.stream)
	}
	c.mu.Unlock()
	for _, s := range streams {
		s.flush()
	}
}

// working lists the children whose work has not ended and that may be
// cancelled.
func (c *children) working() []string {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for id, ch := range c.byID {
		if ch.CanCancel && (ch.State == domain.ChildRunning || ch.State == domain.ChildRequiresAction) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// cancel sends session/cancel naming child id, bounded by bound.
func cancelChild(ctx context.Context, client *acpclient.Client, log *slog.Logger, id string, bound time.Duration) error {
	callCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), bound)
	defer cancel()
	err := client.Cancel(callCtx, id)
	log.Debug("session/cancel sent for a child session", "child_session_id", id, "error", err)
	return err
}

// childStream is the event stream of child ch: its events go through s's
// sink stamped with the child's id and its parent's; its activity is the
// running turn's; it serves the same tool servers; it has its own
// accumulator, tool calls and ledger, and no reply text of its own for
// OnAgentText (its messages are events); it reads the update kinds of the
// parent's dialect, and hands the state it reports to childKind.
func (s *eventStream) childStream(ch *child) *eventStream {
	id, parent := ch.ID, ch.ParentID
	cs := newEventStream(s.clock, s.log.With("child_session_id", id), func(ev domain.Event) {
		ev.SessionID, ev.ParentSessionID = id, parent
		s.emit(ev)
	}, nil, s.pid)
	cs.activity, cs.noticed = s.activity, s.noticed
	cs.dia = s.dia // the child speaks its parent's dialect
	if s.childKind != nil {
		cs.otherKind = s.childKind(ch)
	}
	s.mu.Lock()
	cs.toolsServed = s.toolsServed
	cs.kids = s.kids
	s.mu.Unlock()
	cs.adopt(id)
	return cs
}

// requestSession is the sessionId a runtime's request names, "" when it
// names none.
func requestSession(params json.RawMessage) string {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return ""
	}
	return p.SessionID
}

// Children lists the child sessions the session follows (Settings.Subagents),
// sorted by id; nil when it follows none.
func (s *Session) Children() []ChildSession { return s.stream.kids.snapshot() }

// CancelChild stops the work of child session id through session/cancel
// naming it, bounded by read_timeout_ms; the parent's turn goes on
// (docs/behaviour.md#sessions-as-resources-and-child-sessions). A child
// the session does not follow is response_error, one whose cancel the
// runtime did not grant agent_not_found; neither sends anything.
func (s *Session) CancelChild(ctx context.Context, id string) error {
	ch := s.stream.kids.get(id)
	if ch == nil {
		return domain.NewError(domain.KindResponseError, fmt.Sprintf("no child session %q is followed; session/cancel was not sent", id)).WithReason(domain.ReasonNotOffered)
	}
	s.stream.kids.mu.Lock()
	can := ch.CanCancel
	s.stream.kids.mu.Unlock()
	if !can {
		return domain.NewError(domain.KindAgentNotFound, fmt.Sprintf("the runtime does not grant cancel for child session %q; session/cancel was not sent", id))
	}
	if err := cancelChild(ctx, s.conn.rt.client, s.log, id, s.opts.Settings.EffectiveReadTimeout()); err != nil {
		return domain.WrapError(domain.KindPortExit, domain.MsgWriteFailed, err)
	}
	return nil
}

// childRequest answers a child session's request with the same posture
// as the parent's, and applies the documented rule
// (docs/behaviour.md#sessions-as-resources-and-child-sessions): a refused
// request, or one only a person could answer, ends the child (session/cancel
// naming it, when the runtime grants cancel); the parent's turn goes on.
// The notices are the child's, once per child session.
func (h *connHandler) childRequest(req jsonrpc.Request, ch *child) {
	a := decide(req, false, h.perm.judge(req, domain.PermissionChild, true))
	if err := h.answer(req, a); err != nil {
		h.log.Debug("could not answer a child session's request", "method", req.Method, "child_session_id", ch.ID, "error", err)
		if errors.Is(err, jsonrpc.ErrWriteFailed) {
			return
		}
	}
	ch.stream.decided(a)
	switch {
	case a.refused:
		ch.stream.refused(ch.ID, a.notice)
	case a.person != "":
		ch.stream.notice(a.person)
	case a.unimplemented:
		ch.stream.other(domain.Event{Type: domain.EventMalformed, Message: domain.MsgUnimplementedMethod})
		return
	default:
		return
	}
	h.stream.kids.mu.Lock()
	can := ch.CanCancel
	h.stream.kids.mu.Unlock()
	if !can {
		h.log.Info("a child session's request was refused; the runtime grants no cancel for it", "child_session_id", ch.ID)
		return
	}
	h.log.Info("a child session's request was refused; ending the child", "child_session_id", ch.ID, "method", req.Method)
	_ = cancelChild(context.Background(), h.rt.client, h.log, ch.ID, h.readTimeout)
}
