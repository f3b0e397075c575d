package app

import (
	"encoding/json"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

// msgGatedLog is the Warn record that goes with domain.MsgToolServersGated.
const msgGatedLog = "a tool call was gated by consent in a session that delivered tool servers"

// onRequest answers every request from the runtime at once, the way an
// unattended run must (reference-tables §5). Since each request is answered
// on receipt, none is ever left open for teardown to answer.
func (s *Session) onRequest(req jsonrpc.Request) {
	switch req.Method {
	case acpwire.MethodRequestPermission:
		s.onPermission(req)
	case acpwire.MethodElicitationCreate:
		s.replyError(req, jsonrpc.CodeMethodNotFound, "Method not found")
		s.endForPerson(domain.MsgElicitation)
	default:
		s.log.Debug("agent called a method this client does not implement", "method", req.Method)
		s.replyError(req, jsonrpc.CodeMethodNotFound, "Method not found")
		s.emitOther(domain.Event{Type: domain.EventMalformed, Message: domain.MsgUnimplementedMethod})
	}
}

func (s *Session) onPermission(req jsonrpc.Request) {
	var p acpwire.RequestPermissionRequest
	if err := json.Unmarshal(req.Params, &p); err != nil {
		s.replyError(req, jsonrpc.CodeInvalidParams, "Invalid params")
		return
	}
	if s.endingPending() {
		s.reply(req, acpwire.CancelledAnswer())
		return
	}
	opt, ok := acpwire.RefusingOption(p.Options)
	if !ok {
		s.reply(req, acpwire.CancelledAnswer())
		s.endForPerson(domain.MsgPermissionUngrantable)
		return
	}
	s.reply(req, acpwire.SelectedAnswer(opt.OptionID))
	s.emitOther(domain.Event{Type: domain.EventNotification, Message: domain.MsgPermissionRefused})
	s.mu.Lock()
	gated := s.toolsServed && !s.gatedNotice
	s.gatedNotice = s.gatedNotice || gated
	s.mu.Unlock()
	if gated {
		s.log.Warn(msgGatedLog, "session_id", s.ID())
		s.emit(domain.Event{Type: domain.EventNotification, Message: domain.MsgToolServersGated})
	}
}

// endForPerson ends the running turn as turn_input_required, or holds the
// ending for the next turn when none is running.
func (s *Session) endForPerson(notice string) {
	e := ending{
		override: domain.OverrideInputRequired,
		notice:   notice,
		err:      domain.Disposition("", domain.OverrideInputRequired, "").Err,
	}
	s.mu.Lock()
	t := s.turn
	if t == nil {
		if s.held == nil {
			s.held = &e
		}
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	// The notice goes out before the turn wakes, so it always precedes the
	// turn's outcome event.
	if t.claim(e) {
		s.emitOther(domain.Event{Type: domain.EventNotification, Message: notice})
		t.signal()
	}
}

// endingPending reports whether an ending is already decided, for the
// running turn or held for the next one.
func (s *Session) endingPending() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held != nil {
		return true
	}
	return s.turn != nil && s.turn.ended()
}

func (s *Session) reply(req jsonrpc.Request, result any) {
	if err := s.conn.Reply(req.ID, result); err != nil {
		s.log.Debug("could not answer an agent request", "method", req.Method, "error", err)
	}
}

func (s *Session) replyError(req jsonrpc.Request, code int64, msg string) {
	data, _ := json.Marshal(map[string]string{"method": req.Method})
	if err := s.conn.ReplyError(req.ID, &jsonrpc.Error{Code: code, Message: msg, Data: data}); err != nil {
		s.log.Debug("could not answer an agent request", "method", req.Method, "error", err)
	}
}
