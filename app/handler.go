package app

import (
	"encoding/json"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

// handler is the Session seen as the connection's jsonrpc.Handler. Its
// methods run on the connection's single reader goroutine, in wire order.
type handler Session

var _ jsonrpc.Handler = (*handler)(nil)

// HandleNotification maps session/update onto events and ignores the rest.
func (h *handler) HandleNotification(method string, params json.RawMessage) {
	s := (*Session)(h)
	switch method {
	case acpwire.MethodSessionUpdate:
		s.onUpdate(params)
	default:
		s.log.Debug("ignored a notification from the agent", "method", method)
	}
}

// HandleRequest answers the runtime's requests the unattended way.
func (h *handler) HandleRequest(req jsonrpc.Request) {
	(*Session)(h).onRequest(req)
}

// HandleMalformed reports a line that is not JSON-RPC; the connection goes on.
func (h *handler) HandleMalformed(line []byte, err error) {
	s := (*Session)(h)
	s.log.Debug("agent sent a line that is not JSON-RPC", "error", err, "bytes", len(line))
	s.emitOther(domain.Event{Type: domain.EventMalformed, Message: domain.MsgUnparseableLine})
}

// HandleOversize ends the running turn as turn_outcome_unknown: the line
// that was discarded may have carried its answer. Like every ending this
// side decides, it sends session/cancel and waits (bounded) for the
// runtime's own answer, so the next turn does not meet a busy runtime.
func (h *handler) HandleOversize(n int64) {
	s := (*Session)(h)
	s.log.Warn("agent sent a line over the line bound", "bytes", n)
	s.emitOther(domain.Event{Type: domain.EventMalformed, Message: domain.MsgLineTooLong})
	s.mu.Lock()
	t := s.turn
	s.mu.Unlock()
	if t != nil {
		t.end(ending{err: domain.NewError(domain.KindTurnOutcomeUnknown, domain.MsgLineTooLong)})
	}
}

// onUpdate is the event stream of seed "Event stream" and
// reference-tables §2.1.
func (s *Session) onUpdate(params json.RawMessage) {
	sessionID, u, err := acpwire.DecodeSessionUpdate(params)
	s.mu.Lock()
	foreign := s.idKnown && sessionID != s.sessionID
	replay := s.replay
	s.mu.Unlock()
	if foreign {
		s.log.Debug("dropped an update for another session", "session_id", sessionID)
		return
	}
	if err != nil || !u.Known {
		s.log.Debug("agent sent an unrecognized session update", "kind", u.Kind, "error", err)
		s.emitOther(domain.Event{Type: domain.EventMalformed, Message: domain.MsgUnknownUpdate})
		return
	}
	if replay != nil && sessionID == replay.sessionID {
		replay.touch()
		if u.Kind == acpwire.UpdateUserMessageChunk || u.Kind == acpwire.UpdateAgentMessageChunk {
			replay.observe()
		}
	}
	now := s.opts.Clock.Now()
	switch u.Kind {
	case acpwire.UpdateAgentMessageChunk:
		if u.Chunk.Content.Type != "text" {
			s.emitOther(domain.Event{Type: domain.EventMalformed, Message: domain.MsgNonTextChunk})
			return
		}
		s.onText(u.Chunk.MessageID, u.Chunk.Content.Text, now)
	case acpwire.UpdateUserMessageChunk:
		s.flushMessage()
	case acpwire.UpdateAgentThoughtChunk:
		s.emitOther(domain.Event{Type: domain.EventOtherMessage, Message: domain.MsgReasoningBlock})
	case acpwire.UpdatePlan:
		s.emitOther(domain.Event{Type: domain.EventOtherMessage, Message: domain.MsgPlanUpdate})
	case acpwire.UpdateToolCall, acpwire.UpdateToolCallUpdate:
		s.onToolCall(u.Kind, u.ToolCall, now)
	default:
		s.log.Debug("agent sent a session update with no event", "kind", u.Kind)
	}
}

// onText accumulates one text chunk and emits the empty notification that
// resets the caller's stall timer. It is the hot path of every stream: one
// lock for the accumulator, one for the sink.
func (s *Session) onText(messageID, text string, at time.Time) {
	s.mu.Lock()
	done, flushed := s.acc.Add(messageID, text, at)
	if flushed {
		s.lastMessage = done
	}
	t := s.turn
	s.mu.Unlock()
	s.emitMu.Lock()
	if flushed {
		s.opts.OnEvent(s.stamp(messageEvent(done)))
	}
	if s.opts.OnAgentText != nil {
		s.opts.OnAgentText(messageID, text)
	}
	s.opts.OnEvent(s.stamp(domain.Event{Type: domain.EventNotification, Time: at}))
	s.emitMu.Unlock()
	if t != nil {
		t.touch(at)
	}
}

// flushMessage reports the accumulated message, if any.
func (s *Session) flushMessage() {
	s.mu.Lock()
	done, ok := s.acc.Flush()
	if ok {
		s.lastMessage = done
	}
	s.mu.Unlock()
	if ok {
		s.emit(messageEvent(done))
	}
}

// emitOther emits an event that is not a text chunk: it first ends the
// accumulated message, as every other mapped update does.
func (s *Session) emitOther(ev domain.Event) {
	s.flushMessage()
	s.emit(ev)
	s.touch()
}

func messageEvent(m domain.Message) domain.Event {
	return domain.Event{Type: domain.EventNotification, Message: m.Text, Time: m.At}
}

// touch tells a running turn that the runtime is alive (stall timer).
func (s *Session) touch() {
	s.mu.Lock()
	t := s.turn
	s.mu.Unlock()
	if t != nil {
		t.touch(s.opts.Clock.Now())
	}
}
