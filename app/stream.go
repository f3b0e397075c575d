package app

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
	"github.com/acpdrive/acpdrive/protocol/dialect"
)

// maxOpenTools bounds the tool calls tracked at once; a runtime that opens
// more without ever closing them cannot grow memory without bound
// (docs/behaviour.md#bounds). The oldest record is dropped first.
const maxOpenTools = 1024

// eventStream is the event stream part of a session
// (docs/behaviour.md#events): it turns session/update notifications into
// domain events, accumulates agent messages, tracks tool calls, and sends
// the once-per-session gated-tool notice. It owns that state; the
// lifecycle tells it which session is running and is told of activity.
//
// Its methods run on the connection's reader goroutine, except flush and
// the emits the lifecycle makes between turns; emitMu keeps every event
// in one order.
type eventStream struct {
	clock    ports.Clock
	log      *slog.Logger
	onEvent  func(domain.Event)
	onText   func(messageID, text string)
	pid      func() int
	activity func(at time.Time)             // tells the running turn the runtime is alive
	noticed  func(at time.Time, msg string) // told of every notice of acpdrive's own, after its event
	// dia is the dialect the stream reads the wire in, shared with its
	// children's streams: the default dialect until the handshake settles
	// the session's (speak).
	dia *dialectCell
	// otherKind takes an update the stream does not handle itself, a
	// state the session reports (dialect.KindState, protocol.go); false
	// leaves it unrecognized. Set before the connection starts; nil takes
	// none.
	otherKind func(sessionID string, u dialect.Update) bool
	// childKind, when set, gives each child stream its otherKind: the
	// state a child reports on its own session is its work state.
	childKind func(ch *child) func(sessionID string, u dialect.Update) bool
	// ledger follows this stream's own usage_update figures (cost and
	// context use); a child's stream has its own, so a child's figures
	// never reach its parent's (docs/behaviour.md#token-accounting).
	ledger *ledger
	// onToolStart is Options.OnToolStart; nil tells no one.
	onToolStart func(id string, kind domain.ToolKind, title string)

	emitMu sync.Mutex // serializes the sink

	mu        sync.Mutex // guards the fields below
	sessionID string
	idKnown   bool
	// expected is the session a continuation asked for, the stream's own
	// until an answer names the session (adopt): a replay is routed by
	// session id from its first byte
	// (docs/behaviour.md#sessions-as-resources-and-child-sessions).
	expected    string
	acc         domain.Accumulator
	lastMessage domain.Message
	tools       map[string]*toolRecord
	toolsServed bool
	gatedSent   bool
	replay      *replayWatch // set while a session/load waits for replay
	// kids follows the child sessions (Settings.Subagents); nil follows
	// none, and updates naming another session are dropped.
	kids *children
	// retries remembers the running turn's latest runtime_retrying
	// signal (failure.go).
	retries retryWatch
}

// toolRecord tracks one tool call from its first update to its terminal one.
type toolRecord struct {
	kind  domain.ToolKind
	title string // the latest title the call carried, cut to MessageCap
	began time.Time
}

func newEventStream(clock ports.Clock, log *slog.Logger, sink func(domain.Event), onText func(string, string), pid func() int) *eventStream {
	return &eventStream{
		clock:    clock,
		log:      log,
		onEvent:  sink,
		onText:   onText,
		pid:      pid,
		activity: func(time.Time) {},
		noticed:  func(time.Time, string) {},
		tools:    make(map[string]*toolRecord),
		ledger:   &ledger{},
		dia:      &dialectCell{},
	}
}

// dialectCell holds the dialect a session's streams read the wire in.
type dialectCell struct{ d atomic.Pointer[dialectRef] }

// dialectRef lets an interface value live behind an atomic pointer.
type dialectRef struct{ dialect.Dialect }

// speak settles the dialect the stream, and its children's streams, read
// the wire in.
func (s *eventStream) speak(d dialect.Dialect) { s.dia.d.Store(&dialectRef{d}) }

// dialect is the dialect the stream reads the wire in: the default one
// before the handshake settled the session's.
func (s *eventStream) dialect() dialect.Dialect {
	if r := s.dia.d.Load(); r != nil {
		return r.Dialect
	}
	return dialect.Default()
}

// adopt makes id the session whose updates are reported; updates naming
// another session are dropped from now on.
func (s *eventStream) adopt(id string) {
	s.mu.Lock()
	s.sessionID, s.idKnown = id, true
	s.mu.Unlock()
}

// serveTools records that the session delivered tool servers, which turns
// on the gated-tool notice.
func (s *eventStream) serveTools(served bool) {
	s.mu.Lock()
	s.toolsServed = served
	s.mu.Unlock()
}

// watchReplay routes updates of the loaded session to w until it is
// replaced by nil. Until adopt names the session, the loaded session is
// the stream's own and every other id is foreign (a child's, or another
// session's), also once w is replaced by nil.
func (s *eventStream) watchReplay(w *replayWatch) {
	s.mu.Lock()
	s.replay = w
	if w != nil {
		s.expected = w.sessionID
	}
	s.mu.Unlock()
}

// ownLocked is the session whose updates are the stream's own, and
// whether one is known: the adopted one, else the one a continuation
// asked for. s.mu must be held.
func (s *eventStream) ownLocked() (string, bool) {
	switch {
	case s.idKnown:
		return s.sessionID, true
	case s.expected != "":
		return s.expected, true
	}
	return "", false
}

// LastMessage returns the latest completed agent message.
func (s *eventStream) last() domain.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastMessage
}

// update maps one session/update (docs/behaviour.md#events), decoded by
// the session's dialect into the neutral model.
func (s *eventStream) update(params json.RawMessage) {
	d := s.dialect()
	sessionID, u, err := d.DecodeUpdate(params)
	if err != nil && sessionID == "" {
		// The envelope itself does not decode ("sessionId": 7): whose
		// update it is cannot be known, so it is no other session's
		// (docs/behaviour.md#events).
		s.log.Debug("agent sent a session update whose envelope could not be read", "error", err)
		s.other(domain.Event{Type: domain.EventMalformed, Message: domain.MsgUnknownUpdate})
		return
	}
	s.mu.Lock()
	own, known := s.ownLocked()
	foreign := known && sessionID != own
	replay := s.replay
	s.mu.Unlock()
	if foreign {
		if ch := s.kids.get(sessionID); ch != nil {
			ch.stream.update(params)
			return
		}
		s.log.Debug("dropped an update for another session", "session_id", sessionID)
		return
	}
	if err == nil && s.kids == nil && (u.Kind == dialect.KindSubagent || u.Kind == dialect.KindSessionMessage) {
		if d.ChildTrafficIsBaseline() {
			// The dialect's baseline child traffic on a session that
			// follows no children: logged and dropped, never malformed,
			// never the parent's text
			// (docs/behaviour.md#sessions-as-resources-and-child-sessions).
			s.log.Debug("dropped a child session's update: child sessions are not followed", "kind", u.Wire.Kind)
			s.activity(s.clock.Now())
			return
		}
		u.Kind = dialect.KindUnknown // not declared: unrecognized, as any other unknown kind
	}
	switch {
	case err != nil:
	case u.Kind == dialect.KindState:
		if s.otherKind != nil && s.otherKind(sessionID, u) {
			return
		}
		u.Kind = dialect.KindUnknown
	case u.Kind == dialect.KindAlive:
		s.activity(s.clock.Now())
		return
	}
	if err != nil || u.Kind == dialect.KindUnknown {
		s.log.Debug("agent sent an unrecognized session update", "kind", u.Wire.Kind, "error", err)
		s.other(domain.Event{Type: domain.EventMalformed, Message: domain.MsgUnknownUpdate})
		return
	}
	if replay != nil && sessionID == replay.sessionID {
		replay.touch()
		if u.Kind == dialect.KindUserText || u.Kind == dialect.KindAgentText {
			replay.observe()
		}
	}
	now := s.clock.Now()
	w := &u.Wire
	if w.Info != nil && s.runtimeRetry(w.Info.Meta, now) {
		return
	}
	switch u.Kind {
	case dialect.KindAgentText:
		c := &u.Chunk
		if c.Content.Type != "text" {
			s.other(domain.Event{Type: domain.EventMalformed, Message: domain.MsgNonTextChunk})
			return
		}
		if c.Informational() {
			s.runtimeNotice(c.Content.Text, domain.Notice{Source: domain.NoticeFromMessage}, now)
			return
		}
		s.text(c.MessageID, c.Content.Text, now)
	case dialect.KindUserText:
		s.flush()
		s.activity(now)
	case dialect.KindThought:
		ev := domain.Event{Type: domain.EventOtherMessage, Message: domain.MsgReasoningBlock}
		if u.Chunk.Content.Type == "text" {
			ev.Thought = domain.TruncateRunes(u.Chunk.Content.Text, domain.MessageCap)
		}
		s.other(ev)
	case dialect.KindPlan:
		s.other(domain.Event{Type: domain.EventOtherMessage, Message: domain.MsgPlanUpdate, Plan: planEntries(w.Plan)})
	case dialect.KindToolCall, dialect.KindToolUpdate:
		s.toolCall(w.ToolCall, u.Kind == dialect.KindToolCall, now)
	case dialect.KindNotice:
		s.runtimeNotice(noticeText(w.Notice), domain.Notice{Source: domain.NoticeFromUpdate, Severity: w.Notice.Severity}, now)
	case dialect.KindSubagent:
		s.kids.subagent(sessionID, w.Subagent, now)
	case dialect.KindSessionMessage:
		s.log.Debug("agent sent a message between sessions", "session_id", sessionID)
		s.activity(now)
	default:
		ev, ok := sessionStateEvent(u.Wire)
		if !ok {
			s.log.Debug("agent sent a session update with no event", "kind", w.Kind)
			s.activity(now)
			return
		}
		ev.Time = now
		s.state(ev)
	}
}

// text accumulates one text chunk and emits it as a message_chunk event,
// which also tells the caller the runtime is alive. It is the hot path of
// every stream. The sink is taken before the accumulator, so a flush on
// another goroutine can never take a message whose last chunk is not yet
// emitted and report it first (docs/behaviour.md#messages); the sink is
// released by a defer, whatever its consumer does.
func (s *eventStream) text(messageID, text string, at time.Time) {
	s.textLocked(messageID, text, at)
	s.activity(at)
}

// textLocked is text's part under the sink's lock.
func (s *eventStream) textLocked(messageID, text string, at time.Time) {
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	s.mu.Lock()
	done, flushed := s.acc.Add(messageID, text, at)
	if flushed {
		s.lastMessage = done
	}
	s.mu.Unlock()
	if flushed {
		s.deliver(s.stamp(messageEvent(done)))
	}
	if text != "" {
		// An empty chunk (some runtimes open a message with one) still
		// counts as activity and a messageId boundary, but is no event:
		// no event without content.
		if s.onText != nil {
			s.safely(domain.EventMessageChunk, func() { s.onText(messageID, text) })
		}
		s.deliver(s.stamp(domain.Event{Type: domain.EventMessageChunk, Time: at, Message: text, MessageID: messageID}))
	}
}

// state emits an event about the session's state (commands, mode,
// options, title, context use) or a runtime notice. Neither is part of the
// agent's reply, so neither ends the accumulated message
// (docs/behaviour.md#messages).
func (s *eventStream) state(ev domain.Event) {
	s.ledger.observe(ev)
	s.emit(ev)
	s.activity(ev.Time)
}

// runtimeNotice emits a notice the runtime sent; an empty one is only
// logged (no event without content).
func (s *eventStream) runtimeNotice(text string, n domain.Notice, at time.Time) {
	if text == "" {
		s.log.Debug("agent sent an empty notice", "source", n.Source)
		s.activity(at)
		return
	}
	s.state(domain.Event{Type: domain.EventRuntimeNotice, Time: at, Message: domain.TruncateRunes(text, domain.MessageCap), Notice: &n})
}

// authStatus reports the _auth/status_update notification as a runtime
// notice.
func (s *eventStream) authStatus(params json.RawMessage) {
	var u acpwire.AuthStatusUpdate
	if err := json.Unmarshal(params, &u); err != nil || u.AuthStatus == nil {
		s.log.Debug("agent sent an authentication status this client could not read", "error", err)
		return
	}
	s.runtimeNotice(domain.AuthStatusText(u.AuthStatus.Kind, u.AuthStatus.Label, u.AuthStatus.Detail),
		domain.Notice{Source: domain.NoticeFromAuthStatus}, s.clock.Now())
}

// flush reports the accumulated message, if any: before every other
// mapped update, at a turn's start and end, and when the stream from the
// runtime ends.
func (s *eventStream) flush() {
	// The sink's lock first, as in text: a message is never handed over
	// after a chunk of the next one.
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	s.mu.Lock()
	done, ok := s.acc.Flush()
	if ok {
		s.lastMessage = done
	}
	s.mu.Unlock()
	if ok {
		s.deliver(s.stamp(messageEvent(done)))
	}
}

// other emits an event that is not a text chunk: it first ends the
// accumulated message, as every other mapped update does, and counts as
// activity.
func (s *eventStream) other(ev domain.Event) {
	s.flush()
	s.emit(ev)
	s.activity(s.clock.Now())
}

// notice emits a notification, ending the accumulated message first.
func (s *eventStream) notice(msg string) {
	s.other(domain.Event{Type: domain.EventNotification, Message: msg, Origin: domain.OriginAcpdrive})
	s.noticed(s.clock.Now(), msg)
}

// permission reports the answer to one permission request
// (docs/behaviour.md#permission-posture), before any notice it draws.
func (s *eventStream) permission(info domain.PermissionInfo) {
	s.other(domain.Event{Type: domain.EventPermissionDecision, Message: info.PermissionMessage(), Permission: &info})
}

// held announces an ending held for a turn: the decision it came from,
// then its notice (docs/behaviour.md#held-endings).
func (s *eventStream) held(e *ending) {
	if e.decision != nil {
		s.permission(*e.decision)
	}
	if e.question != nil {
		s.elicitation(*e.question)
	}
	s.notice(e.notice)
}

// elicitation reports a question the runtime asked and its answer
// (docs/behaviour.md#elicitation).
func (s *eventStream) elicitation(info domain.ElicitationInfo) {
	s.other(domain.Event{Type: domain.EventElicitation, Message: info.ElicitationMessage(), Elicitation: &info})
}

// refused reports a refused permission request and, the first time in a
// session that delivered tool servers, the gated-tool notice.
func (s *eventStream) refused(sessionID, notice string) {
	s.notice(notice)
	s.mu.Lock()
	gated := s.toolsServed && !s.gatedSent
	s.gatedSent = s.gatedSent || gated
	s.mu.Unlock()
	if gated {
		s.log.Warn("a tool call was gated by consent in a session that delivered tool servers", "session_id", sessionID)
		s.emit(domain.Event{Type: domain.EventNotification, Message: domain.MsgToolServersGated, Origin: domain.OriginAcpdrive})
		s.noticed(s.clock.Now(), domain.MsgToolServersGated)
	}
}

// toolCall records tool_call and tool_call_update, and emits one
// tool_result per call that reaches completed or failed — also for a
// tool_call born terminal (docs/behaviour.md#events). A tool_call (starts)
// for an id still open starts the call again: its duration is counted
// from the latest start.
func (s *eventStream) toolCall(tc *acpwire.ToolCall, starts bool, now time.Time) {
	s.mu.Lock()
	rec, seen := s.tools[tc.ToolCallID]
	if seen && starts {
		rec.began = now
	}
	if !seen {
		rec = &toolRecord{kind: domain.ToolOther, began: now}
		if len(s.tools) >= maxOpenTools {
			s.dropOldestToolLocked()
		}
		s.tools[tc.ToolCallID] = rec
	}
	if tc.Kind != nil {
		rec.kind = domain.NormalizeToolKind(*tc.Kind)
	}
	// The latest title the call carried is reported; nothing of a title
	// is kept beyond what can be emitted.
	if tc.Title != nil && *tc.Title != "" {
		rec.title = domain.TruncateRunes(*tc.Title, domain.MessageCap)
	}
	terminal := tc.Status != nil &&
		(*tc.Status == acpwire.ToolStatusCompleted || *tc.Status == acpwire.ToolStatusFailed)
	if terminal {
		delete(s.tools, tc.ToolCallID)
	}
	kind, title := rec.kind, rec.title
	s.mu.Unlock()
	if !seen && !terminal && s.onToolStart != nil {
		s.emitMu.Lock()
		s.onToolStart(tc.ToolCallID, kind, title)
		s.emitMu.Unlock()
	}
	if !terminal {
		s.activity(now)
		return
	}
	s.other(domain.Event{
		Type:           domain.EventToolResult,
		Time:           now,
		ToolName:       string(rec.kind),
		ToolDurationMS: now.Sub(rec.began).Milliseconds(),
		ToolError:      *tc.Status == acpwire.ToolStatusFailed,
		Message:        rec.title,
		ToolCallID:     domain.TruncateRunes(tc.ToolCallID, domain.MessageCap),
		ToolTitle:      rec.title,
		ToolStatus:     *tc.Status,
	})
}

// announcedTitle is the latest title the open tool call id carried ("" when
// none is open or it carried none).
func (s *eventStream) announcedTitle(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rec, ok := s.tools[id]; ok {
		return rec.title
	}
	return ""
}

// dropOldestToolLocked forgets the oldest open call. s.mu must be held.
func (s *eventStream) dropOldestToolLocked() {
	oldestID := ""
	var oldest time.Time
	for id, r := range s.tools {
		if oldestID == "" || r.began.Before(oldest) {
			oldestID, oldest = id, r.began
		}
	}
	delete(s.tools, oldestID)
	s.log.Debug("forgot the oldest open tool call: too many open at once", "max_open_tools", maxOpenTools)
}

// endTurn forgets the calls still open at the end of a turn: they never
// reached a terminal status, so they produce no tool_result; each is
// logged at Debug.
func (s *eventStream) endTurn() {
	s.mu.Lock()
	open := s.tools
	s.tools = make(map[string]*toolRecord)
	s.mu.Unlock()
	ids := make([]string, 0, len(open))
	for id := range open {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		s.log.Debug("tool call was still open when the turn ended", "tool_call_id", id, "tool_kind", string(open[id].kind))
	}
}

// emit hands one event to the sink.
func (s *eventStream) emit(ev domain.Event) {
	ev = s.stamp(ev)
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	s.deliver(ev)
}

// underSink runs f under the sink's lock: what the sink keeps (the
// session's reply) is read and reset there, between two events.
func (s *eventStream) underSink(f func()) {
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	f()
}

// deliver hands ev to the sink; s.emitMu is held.
func (s *eventStream) deliver(ev domain.Event) { s.safely(ev.Type, func() { s.onEvent(ev) }) }

// safely runs a consumer of the caller's (OnEvent, OnAgentText, an
// observer) for an event of type typ. A panic there is the consumer's bug,
// not the session's end: it is recovered and logged at Error, the event is
// lost for the consumers after the one that panicked, and the session goes
// on (docs/behaviour.md#the-librarys-own-contract).
func (s *eventStream) safely(typ domain.EventType, consume func()) {
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("an event consumer panicked", "event_type", string(typ), "panic", fmt.Sprint(v))
		}
	}()
	consume()
}

// stamp fills an event's time (UTC) and the agent's PID.
func (s *eventStream) stamp(ev domain.Event) domain.Event {
	if ev.Time.IsZero() {
		ev.Time = s.clock.Now()
	}
	ev.Time = ev.Time.UTC()
	if ev.AgentPID == 0 {
		ev.AgentPID = s.pid()
	}
	return ev
}

func messageEvent(m domain.Message) domain.Event {
	return domain.Event{Type: domain.EventNotification, Message: m.Text, Time: m.At, Origin: domain.OriginAgent}
}
