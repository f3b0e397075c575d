package app

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

// handler is the Session seen as the connection's jsonrpc.Handler: it
// hands each message to the part that owns it. Its methods run on the
// connection's single reader goroutine, in wire order.
type handler Session

var (
	_ jsonrpc.Handler     = (*handler)(nil)
	_ jsonrpc.IdleHandler = (*handler)(nil)
)

// HandleIdle tells Options.OnReadIdle that the reader is about to wait
// for the runtime.
func (h *handler) HandleIdle() {
	if idle := h.opts.OnReadIdle; idle != nil {
		idle()
	}
}

// HandleNotification gives session/update to the event stream and ignores
// the rest.
func (h *handler) HandleNotification(method string, params json.RawMessage) {
	s := (*Session)(h)
	if method == acpwire.MethodSessionUpdate {
		s.stream.update(params)
		return
	}
	s.log.Debug("ignored a notification from the agent", "method", method)
}

// HandleRequest answers the runtime's request the way the permission
// policy decides, at once, with the write bounded by read_timeout_ms
// (docs/behaviour.md#bounds); since every request is answered on receipt,
// none is left open for teardown to answer.
func (h *handler) HandleRequest(req jsonrpc.Request) {
	s := (*Session)(h)
	a := decide(req, s.endingPending())
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.Config.EffectiveReadTimeout())
	var err error
	if a.errCode != 0 {
		err = s.client.ReplyError(ctx, req, a.errCode, a.errMsg)
	} else {
		err = s.client.Reply(ctx, req.ID, a.result)
	}
	cancel()
	if err != nil {
		s.log.Debug("could not answer an agent request", "method", req.Method, "error", err)
		if errors.Is(err, jsonrpc.ErrWriteFailed) {
			s.endTurn(ending{err: domain.WrapError(domain.KindPortExit, domain.MsgWriteFailed, err)})
		}
	}
	switch {
	case a.refused:
		s.stream.refused(s.ID())
	case a.person != "":
		s.endForPerson(a.person)
	case a.unimplemented:
		s.log.Debug("agent called a method this client does not implement", "method", req.Method)
		s.stream.other(domain.Event{Type: domain.EventMalformed, Message: domain.MsgUnimplementedMethod})
	case a.errCode == jsonrpc.CodeInvalidParams:
		s.log.Debug("agent sent a request with invalid params", "method", req.Method)
	}
}

// HandleMalformed reports a line that is not JSON-RPC; the connection goes on.
func (h *handler) HandleMalformed(line []byte, err error) {
	s := (*Session)(h)
	s.log.Debug("agent sent a line that is not JSON-RPC", "error", err, "bytes", len(line))
	s.stream.other(domain.Event{Type: domain.EventMalformed, Message: domain.MsgUnparseableLine})
}

// HandleOversize ends the running turn as turn_outcome_unknown as soon as
// a line passes the bound: the discarded line may have carried its
// answer. Like every ending this side decides, it sends session/cancel and
// waits (bounded) for the runtime's own answer.
func (h *handler) HandleOversize(n int64) {
	s := (*Session)(h)
	s.log.Warn("agent sent a line over the line bound", "bytes", n)
	s.stream.other(domain.Event{Type: domain.EventMalformed, Message: domain.MsgLineTooLong})
	s.endTurn(ending{err: domain.NewError(domain.KindTurnOutcomeUnknown, domain.MsgLineTooLong)})
}
