package app

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

// connHandler is the connection's jsonrpc.Handler: it hands each message
// to the part that owns it — notifications to the event stream, requests
// to the permission policy (and its answer, bounded, to the runtime), the
// endings they decide to the turn engine. Its methods run on the
// connection's single reader goroutine, in wire order.
type connHandler struct {
	log         *slog.Logger
	rt          *runtime
	stream      *eventStream
	turns       *turnEngine
	readTimeout time.Duration
	onIdle      func()
	sessionID   func() string
	// perm asks the permission policy (docs/behaviour.md#permission-posture).
	perm *permissionJudge
}

var (
	_ jsonrpc.Handler     = (*connHandler)(nil)
	_ jsonrpc.IdleHandler = (*connHandler)(nil)
)

// HandleIdle tells Options.OnReadIdle that the reader is about to wait
// for the runtime.
func (h *connHandler) HandleIdle() {
	if h.onIdle != nil {
		h.onIdle()
	}
}

// HandleNotification gives session/update and _auth/status_update to the
// event stream and ignores the rest.
func (h *connHandler) HandleNotification(method string, params json.RawMessage) {
	switch method {
	case acpwire.MethodSessionUpdate:
		h.stream.update(params)
		return
	case acpwire.MethodAuthStatusUpdate:
		h.stream.authStatus(params)
		return
	}
	h.log.Debug("ignored a notification from the agent", "method", method)
}

// HandleRequest answers the runtime's request the way the permission
// policy decides, at once, with the write bounded by read_timeout_ms
// (docs/behaviour.md#bounds); since every request is answered on receipt,
// none is left open for teardown to answer.
func (h *connHandler) HandleRequest(req jsonrpc.Request) {
	sid := requestSession(req.Params)
	if ch := h.stream.kids.get(sid); ch != nil {
		h.childRequest(req, ch)
		return
	}
	// The policy is asked before the engine's lock; a request naming a
	// session this run does not follow gets the default refusal.
	session := domain.PermissionParent
	ours := sid != "" && sid == h.sessionID()
	if !ours {
		session = domain.PermissionOther
	}
	j := h.perm.judge(req, session, ours)
	a, owner := h.turns.request(func(pending bool) answer { return decide(req, pending, j) })
	if owner != nil {
		// The running turn owns the ending: it wakes once the notice is
		// out, whatever happens on the way (docs/behaviour.md#held-endings).
		defer owner.signal()
	}
	if err := h.answer(req, a); err != nil {
		h.log.Debug("could not answer an agent request", "method", req.Method, "error", err)
	}
	h.stream.decided(a)
	switch {
	case a.refused:
		h.stream.refused(h.sessionID(), a.notice)
	case owner != nil:
		h.stream.notice(a.person)
	case a.unimplemented:
		h.log.Debug("agent called a method this client does not implement", "method", req.Method)
		h.stream.other(domain.Event{Type: domain.EventMalformed, Message: domain.MsgUnimplementedMethod})
	case a.errCode == jsonrpc.CodeInvalidParams:
		h.log.Debug("agent sent a request with invalid params", "method", req.Method)
	}
}

// answer writes the decided answer to req within the read bound; a write
// that failed ends the running turn port_exit (the connection is gone).
func (h *connHandler) answer(req jsonrpc.Request, a answer) error {
	ctx, cancel := context.WithTimeout(context.Background(), h.readTimeout)
	defer cancel()
	var err error
	if a.errCode != 0 {
		err = h.rt.client.ReplyError(ctx, req, a.errCode, a.errMsg)
	} else {
		err = h.rt.client.Reply(ctx, req.ID, a.result)
	}
	if errors.Is(err, jsonrpc.ErrWriteFailed) {
		h.turns.endRunning(ending{err: domain.WrapError(domain.KindPortExit, domain.MsgWriteFailed, err)})
	}
	return err
}

// HandleMalformed reports a line that is not JSON-RPC; the connection goes on.
func (h *connHandler) HandleMalformed(line []byte, err error) {
	h.log.Debug("agent sent a line that is not JSON-RPC", "error", err, "bytes", len(line))
	h.stream.other(domain.Event{Type: domain.EventMalformed, Message: domain.MsgUnparseableLine})
}

// HandleOversize ends the running turn as turn_outcome_unknown as soon as
// a line passes the bound: the discarded line may have carried its
// answer. Like every ending this side decides, it sends session/cancel and
// waits (bounded) for the runtime's own answer.
func (h *connHandler) HandleOversize(n int64) {
	h.log.Warn("agent sent a line over the line bound", "bytes", n)
	h.stream.other(domain.Event{Type: domain.EventMalformed, Message: domain.MsgLineTooLong})
	h.turns.endRunning(ending{err: domain.NewError(domain.KindTurnOutcomeUnknown, domain.MsgLineTooLong)})
}
