package app

import (
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/acpdrive/acpdrive/protocol/acpwire"
	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

// router is a connection's handler: it hands what the runtime sends to
// the session it names. On a connection of one session (Start's) that
// session takes everything, its children's and strangers' messages
// included, as its own handler decides. On a shared connection
// (docs/behaviour.md#runtime-host) a session's route is taken as soon as
// its id is known (Session.adopt, or before a continuation); what
// names a session not (yet) routed is held, bounded, until the route is
// added: notifications always (a session's first updates may arrive right
// after session/new's answer), requests only for a session the runtime
// has announced (session/new's or session/fork's answer was read: the
// route follows without waiting on the runtime). Any other request naming
// no routed session is refused at once. Its methods run on the
// connection's reader goroutine; deliveries happen under its lock, in wire
// order.
type router struct {
	log *slog.Logger
	// shared says sessions are routed by id; otherwise solo takes every
	// message.
	shared bool
	// refuse answers a request no session takes -32602; set before the
	// connection starts.
	refuse func(req jsonrpc.Request)

	mu        sync.Mutex
	byID      map[string]route
	held      map[string][]held
	announced map[string]bool // ids answered by session/new or session/fork, not yet routed
	creating  int             // sessions being created, continued or forked
	attached  map[*Session]*connHandler

	// solo is the one session of a connection that is not shared: every
	// line reads it, without the lock.
	solo atomic.Pointer[route]
}

// held is one message kept for a session not yet routed: a notification
// to hand over, or a request to hand over or refuse.
type held struct {
	note func(*connHandler)
	req  *jsonrpc.Request
}

// route is one session's handler on the shared connection.
type route struct {
	s *Session
	h *connHandler
}

// Bounds on what the router holds for sessions not yet routed.
const (
	heldSessionsMax = 64
	heldPerSession  = 256
)

var (
	_ jsonrpc.Handler       = (*router)(nil)
	_ jsonrpc.IdleHandler   = (*router)(nil)
	_ jsonrpc.ResultHandler = (*router)(nil)
)

func newRouter(log *slog.Logger, shared bool) *router {
	return &router{log: log, shared: shared, byID: map[string]route{}, held: map[string][]held{}, announced: map[string]bool{},
		attached: map[*Session]*connHandler{}}
}

// attach gives s's handler its place: on a connection that is not shared,
// every message; on a shared one, the messages naming ids (the
// continuation's, when one is asked for, at once; the adopted one through
// add).
func (r *router) attach(s *Session, h *connHandler) {
	if !r.shared {
		r.solo.Store(&route{s: s, h: h})
		return
	}
	r.mu.Lock()
	r.attached[s] = h
	r.mu.Unlock()
	if id := s.opts.ResumeSessionID; id != "" {
		// A continuation's replay arrives before its answer: the route is
		// taken before it is asked for.
		r.add(id, s, h)
	}
}

// adopted routes id to s, attached before: what the runtime sends for it
// from now on is its own, as on a connection of its own.
func (r *router) adopted(id string, s *Session) {
	r.mu.Lock()
	h := r.attached[s]
	r.mu.Unlock()
	if h != nil {
		r.add(id, s, h)
	}
}

// detach removes s's route and forgets its handler.
func (r *router) detach(s *Session) {
	r.mu.Lock()
	delete(r.attached, s)
	r.mu.Unlock()
	r.remove(s.ID())
}

// add routes id to s and delivers what was held for it; on a connection
// that is not shared, the solo route already takes everything.
func (r *router) add(id string, s *Session, h *connHandler) {
	if !r.shared {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byID[id] = route{s: s, h: h}
	for _, m := range r.held[id] {
		if m.req != nil {
			h.HandleRequest(*m.req)
		} else {
			m.note(h)
		}
	}
	delete(r.held, id)
	delete(r.announced, id)
}

// remove drops id's route; a request held for it is refused.
func (r *router) remove(id string) {
	if !r.shared {
		return
	}
	r.mu.Lock()
	delete(r.byID, id)
	reqs := r.dropLocked(id)
	r.mu.Unlock()
	r.refuseAll(reqs)
}

// begin counts a session being created, continued or forked; end ends
// that count. Once none is, the ids announced but never routed (a start
// that failed or was cancelled after the answer) are dropped, their held
// requests refused.
func (r *router) begin() {
	r.mu.Lock()
	r.creating++
	r.mu.Unlock()
}

func (r *router) end() {
	r.mu.Lock()
	r.creating--
	var reqs []jsonrpc.Request
	if r.creating == 0 {
		for id := range r.announced {
			reqs = append(reqs, r.dropLocked(id)...)
		}
	}
	r.mu.Unlock()
	r.refuseAll(reqs)
}

// dropLocked forgets what was held and announced for id and returns the
// held requests, to be refused once the lock is released.
func (r *router) dropLocked(id string) []jsonrpc.Request {
	var reqs []jsonrpc.Request
	for _, m := range r.held[id] {
		if m.req != nil {
			reqs = append(reqs, *m.req)
		}
	}
	delete(r.held, id)
	delete(r.announced, id)
	return reqs
}

func (r *router) refuseAll(reqs []jsonrpc.Request) {
	for _, req := range reqs {
		r.refuse(req)
	}
}

// HandleResult notes the session a session/new or session/fork answer
// announces: a request naming it is held for its route, which the session
// being started takes without waiting on the runtime.
func (r *router) HandleResult(method string, result json.RawMessage) {
	if method != acpwire.MethodSessionNew && method != acpwire.MethodSessionFork {
		return
	}
	var res struct {
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(result, &res) != nil || res.SessionID == "" {
		return
	}
	r.mu.Lock()
	if _, ok := r.byID[res.SessionID]; !ok && r.creating > 0 {
		r.announced[res.SessionID] = true
	}
	r.mu.Unlock()
}

// deliver hands a notification to id's session, or holds a copy of it
// (the reader reuses params' bytes once the handler returned).
func (r *router) deliver(id, method string, params json.RawMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rt, ok := r.byID[id]; ok {
		rt.h.HandleNotification(method, params)
		return
	}
	if !r.roomLocked(id) {
		r.log.Debug("dropped a message for a session not routed", "session_id", id)
		return
	}
	kept := append(json.RawMessage(nil), params...)
	r.held[id] = append(r.held[id], held{note: func(h *connHandler) { h.HandleNotification(method, kept) }})
}

// roomLocked reports whether one more message may be held for id.
func (r *router) roomLocked(id string) bool {
	_, ok := r.held[id]
	return (ok || len(r.held) < heldSessionsMax) && len(r.held[id]) < heldPerSession
}

// each runs f for every routed session.
func (r *router) each(f func(route)) {
	if solo := r.solo.Load(); solo != nil {
		f(*solo) // no other route: add takes none on such a connection
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rt := range r.byID {
		f(rt)
	}
}

// HandleNotification routes by the notification's sessionId.
func (r *router) HandleNotification(method string, params json.RawMessage) {
	if solo := r.solo.Load(); solo != nil {
		// The one session takes everything: no id to read (a decode per
		// line, half the reader's time in a flood).
		solo.h.HandleNotification(method, params)
		return
	}
	r.deliver(requestSession(params), method, params)
}

// HandleRequest routes by the request's sessionId. A request naming a
// session the runtime announced but whose route is not taken yet is held
// for it (bounded); any other request naming no routed session is
// refused at once, never held open.
func (r *router) HandleRequest(req jsonrpc.Request) {
	if solo := r.solo.Load(); solo != nil {
		solo.h.HandleRequest(req)
		return
	}
	id := requestSession(req.Params)
	r.mu.Lock()
	if rt, ok := r.byID[id]; ok {
		rt.h.HandleRequest(req)
		r.mu.Unlock()
		return
	}
	if r.announced[id] && r.roomLocked(id) {
		r.held[id] = append(r.held[id], held{req: &req})
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	r.refuse(req)
}

// HandleIdle tells every session's Options.OnReadIdle.
func (r *router) HandleIdle() { r.each(func(rt route) { rt.h.HandleIdle() }) }

// HandleMalformed reports the line to every session.
func (r *router) HandleMalformed(line []byte, err error) {
	r.each(func(rt route) { rt.h.HandleMalformed(line, err) })
}

// HandleOversize ends every session's running turn: the discarded line
// may have carried any of their answers.
func (r *router) HandleOversize(n int64) { r.each(func(rt route) { rt.h.HandleOversize(n) }) }

// betweenTurns reports what each session's stream still held once the
// shared stream ended.
func (r *router) betweenTurns() {
	// Through the parts the route was attached with: a session whose
	// runtime a retry replaced has other parts since (Session.assemble).
	var all []*connHandler
	r.each(func(rt route) { all = append(all, rt.h) })
	for _, h := range all {
		h.turns.betweenTurns(h.stream.flush)
	}
}
