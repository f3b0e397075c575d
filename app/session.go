package app

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
)

// Session is one ACP session on a runtime connection. It is made of parts
// that each own their state (docs/behaviour.md#start-up, #turn-disposition,
// #teardown; ARCHITECTURE.md draws them): the event stream, the turn
// engine, the capability record, the outbox and the observation. What one
// runtime endpoint has (the process, the JSON-RPC connection, the router,
// the handshake, the measurement) is its connection's, which it may share
// with other sessions (a Host's); the Session holds what its start
// resolved and hands the parts to each other. A retry whose process is
// gone starts the runtime again under the same *Session value
// (docs/behaviour.md#fleet): its parts are made anew, its totals kept.
type Session struct {
	opts  Options
	log   *slog.Logger
	clock ports.Clock

	conn   *connection
	stream *eventStream
	turns  *turnEngine
	caps   *capRecord
	obs    *observation // nil observes nothing
	out    *outbox      // the consumers' deliveries

	proto atomic.Pointer[protocolRef] // the protocol part, once initialize settled the version

	reply  turnReply     // the running turn's reply, from the emitted events
	totals sessionTotals // the session's turns summed (Totals)
	queued steerQueue    // steers queued for the next prompt (docs/behaviour.md#steering)

	// home is the Host whose shared process carries the session, nil on
	// a process of its own; a replacement of the runtime goes through it
	// (docs/behaviour.md#fleet).
	home *Host
	// place is the Fleet's seat of the session, nil outside a fleet; set
	// once before the session is handed out, kept across replacements.
	place *fleetSeat
	// swap lets Stop and Steer wait out a replacement of the runtime;
	// kept across replacements.
	swap swapGuard

	res   resolution // what the start resolved; read-only once it returned
	tools toolArms   // the tool servers acpdrive serves the session
	life  lifecycle
	id    sessionIdent
}

// resolution is what a session's start resolved: set while it starts,
// read-only afterwards.
type resolution struct {
	agent domain.AgentInfo
	route string
	// continuation is what became of Options.ResumeSessionID; nil when
	// none was asked for.
	continuation *Continuation
	control      NegativeControl
	servers      []domain.MCPServer          // delivered on session/new and continuation calls
	endWith      string                      // how the session ends through the protocol, "" for not at all
	created      *acpwire.NewSessionResponse // session/new's answer, kept for a probe
}

// toolArms are the tool servers acpdrive serves a session itself.
type toolArms struct {
	beacon ports.ArmedBeacon // the tool-server beacon, nil when not asked for
	result ports.ArmedResult // the result tool's server, nil when not declared
}

// lifecycle is how a session ends: once, through its connection's leave.
type lifecycle struct {
	// stopped is set once Stop was called: a later Turn is refused.
	stopped atomic.Bool
	// replaced marks a start that another start replaces (a restart, a
	// failover) or that failed: its teardown does not end the observation,
	// and within names the step that holds it ("" for the session).
	replaced bool
	within   string
	once     sync.Once
	done     chan struct{}
	err      error
}

// sessionIdent is the session's id, set when adopted.
type sessionIdent struct {
	mu sync.Mutex
	id string
}

// newSession assembles the parts of one session on c.
func newSession(c *connection, opts Options, obs *observation) *Session {
	s := &Session{}
	s.assemble(c, opts, obs)
	return s
}

// assemble makes s a session on c: every part new, what the session's
// start resolves forgotten; only the session's totals and its queued
// steers are kept, so that a session whose runtime a retry replaced in
// place (Session.replaceRuntime) counts every attempt
// (docs/behaviour.md#fleet). The caller owns s: nothing else uses it.
func (s *Session) assemble(c *connection, opts Options, obs *observation) {
	log := opts.Logger.With("component", "acp_session")
	s.opts, s.log, s.clock, s.obs, s.conn = opts, log, opts.Clock, obs, c
	s.turns = newTurnEngine(opts.Clock, log)
	s.caps = newCapRecord(log)
	s.proto.Store(nil)
	s.reply = turnReply{}
	s.res = resolution{}
	s.tools = toolArms{}
	s.life = lifecycle{done: make(chan struct{})}
	s.id = sessionIdent{}
	s.out = newOutbox(log, c.shared(), c.backlog, func() {
		s.turns.endRunning(ending{err: domain.NewError(domain.KindTurnOutcomeUnknown, msgConsumerBehind)})
	})
	consume := func(ev domain.Event) {
		opts.OnEvent(ev)
		obs.event(ev)
	}
	sink := func(ev domain.Event) {
		s.reply.observe(ev)
		s.out.event(ev, consume)
	}
	var onText func(string, string)
	if opts.OnAgentText != nil {
		onText = func(id, text string) { s.out.text(id, text, opts.OnAgentText) }
	}
	s.stream = newEventStream(opts.Clock, log, sink, onText, c.rt.pid)
	s.stream.activity = s.turns.touch
	s.turns.announce = s.stream.held
	if opts.OnToolStart != nil {
		s.stream.onToolStart = func(id string, kind domain.ToolKind, title string) {
			s.out.push(func() { opts.OnToolStart(id, kind, title) })
		}
	}
	s.stream.noticed = obs.notice
	if opts.Settings.Subagents {
		s.stream.kids = newChildren(s.stream, log)
	}
	s.stream.otherKind = s.otherKind
	s.stream.childKind = s.childKind
}

// msgConsumerBehind ends the turn of a session whose consumers fell
// HostOptions.EventBacklog deliveries behind on a shared process
// (docs/behaviour.md#runtime-host).
const msgConsumerBehind = "the session's event consumer fell behind its shared process by more than the event backlog (HostOptions.EventBacklog); the rest of the turn's events were dropped"

// turn runs one prompt as a turn, opened by opening (session_started, or
// a follow-up's result_follow_up); asks says whether it asks for the
// structured result (docs/behaviour.md#structured-results): the result
// tool keeps a call only while such a turn runs, and the turn's result is
// taken before the next turn may begin. Turn and TurnWithResult add the
// instruction and the follow-ups.
func (s *Session) turn(ctx context.Context, prompt string, asks bool, opening domain.Event) domain.TurnResult {
	if s.life.stopped.Load() {
		return domain.FailedResult(domain.NewError(domain.KindTurnCancelled, domain.MsgSessionStopped))
	}
	t, held, first, ok := s.turns.begin()
	if !ok {
		return domain.FailedResult(domain.NewError(domain.KindResponseError, domain.MsgTurnInFlight))
	}
	t.meta = s.obs.turnStarted(s.clock.Now())
	s.askResult(asks)
	s.turns.gate.Lock()
	defer s.turns.gate.Unlock()

	s.stream.flush()
	s.stream.retries.begin()
	s.stream.underSink(s.reply.begin)
	s.stream.ledger.begin()
	opening.SessionID = s.ID()
	s.stream.emit(opening)
	if first {
		s.firstTurnNotices()
	}

	var res domain.TurnResult
	switch {
	case s.conn.rt.outputLost.Load():
		res = domain.FailedResult(domain.NewError(domain.KindPortExit, domain.MsgOutputNotCollected))
	case held != nil:
		s.stream.held(held)
		res = held.result()
	case s.conn.rt.ended():
		res = domain.FailedResult(domain.NewError(domain.KindPortExit, domain.MsgConnEndedBeforeResult))
	default:
		req := promptRequest{sessionID: s.ID(), text: s.queued.prefix(prompt), meta: t.meta}
		stopJournal := s.watchJournal() // the runtime's own retries (app/failure.go)
		res = s.turns.run(ctx, t, s.prompter(), boundsOf(s.opts.Settings), req)
		stopJournal()
		s.protocol().endTurn()
	}

	t.handedOver() // no prompt goes out after this point
	s.stream.kids.endTurn()
	s.stream.flush()
	s.stream.endTurn()
	s.stream.underSink(func() { res.Reply, res.ReplyCut = s.reply.take() })
	s.classifyFailure(&res)
	s.measure(ctx, &res)
	s.totals.add(res)
	s.place.count(res)
	s.takeResult(&res, asks)
	s.turns.finish()
	if n := s.out.settle(); n > 0 {
		s.log.Warn("events of the turn were dropped: the session's consumer fell behind", "dropped", n)
	}
	s.stream.emit(outcomeEvent(res))
	s.out.wait()
	s.obs.turnEnded(s.clock.Now(), res)
	return res
}

// firstTurnNotices sends the once-per-session notices: the capability
// record's gaps and a failed tool-server confirmation.
func (s *Session) firstTurnNotices() {
	if notice, ok := s.caps.takeNotice().Notice(); ok {
		s.stream.emit(domain.Event{Type: domain.EventNotification, Message: notice, Origin: domain.OriginAcpdrive})
		s.stream.noticed(s.clock.Now(), notice)
	}
	if notice := s.res.agent.ToolServers.Notice(); notice != "" {
		s.stream.emit(domain.Event{Type: domain.EventNotification, Message: notice, Origin: domain.OriginAcpdrive})
	}
	if p := s.res.agent.Posture; p != nil && s.opts.Settings.Session.Applies() {
		// Only a configured session announces its posture: an unconfigured
		// one shows it in the record and the result alone
		// (docs/behaviour.md#session-configuration).
		s.stream.emit(domain.Event{Type: domain.EventNotification, Message: domain.MsgSessionPosturePrefix + p.Text(), Origin: domain.OriginAcpdrive})
	}
}

// outcomeEvent is the event that closes a turn: turn_failed for a failure
// the runtime reported through its stop reason, turn_ended_with_error for
// any other failure; either way its Outcome is the result's
// (docs/behaviour.md#turn-disposition).
func outcomeEvent(res domain.TurnResult) domain.Event { return res.Event() }

// Stop ends the session through its connection's one stop path
// (docs/behaviour.md#connections): the last session of a connection tears
// it down in the fixed order of docs/behaviour.md#teardown, however far
// the start got; a session that leaves a Host's process others still use
// (or that the host keeps warm) has its running turn cancelled and is
// closed through the protocol alone.
//
// Stop returns by ctx's deadline whatever the runtime does: when ctx ends
// first, Stop returns its error while the teardown goes on, on schedule,
// in a goroutine the session owns; a later Stop waits for it and returns
// its result. Stop is idempotent and safe for concurrent use. What survives
// the teardown is reported as a *domain.SurvivorsError (logged at Warn).
//
// Called while a retry replaces the session's runtime
// (docs/behaviour.md#fleet), Stop cancels the replacement's start and
// waits for it to end, within ctx, then stops what runs.
func (s *Session) Stop(ctx context.Context) error {
	if err := s.swap.wait(ctx, true); err != nil {
		return fmt.Errorf("app: stop did not finish before its context ended; the runtime's replacement goes on: %w", err)
	}
	defer s.place.release()
	return s.stop(ctx)
}

// stop is Stop's own path, for the steps of a start and of a replacement
// (which hold the session already): the session's connection's leave.
func (s *Session) stop(ctx context.Context) error {
	s.life.stopped.Store(true)
	return s.conn.leave(ctx, s)
}

// failedStartStopMargin is how much longer than the stop grace the
// teardown of a start that did not become the session may take
// (docs/behaviour.md#bounds: stop_grace + 5 s).
const failedStartStopMargin = 5 * time.Second

// stopWithin tears down a start that did not become the session, bounded
// by the stop grace and failedStartStopMargin more.
func (s *Session) stopWithin(ctx context.Context) error {
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.Settings.StopGrace+failedStartStopMargin)
	defer cancel()
	return s.stop(stopCtx)
}

// ID is the identifier of the session the runtime runs: the continued one,
// or the one session/new created (also after a continuation fell back).
func (s *Session) ID() string {
	s.id.mu.Lock()
	defer s.id.mu.Unlock()
	return s.id.id
}

// adopt makes id the session's identifier.
func (s *Session) adopt(id string) {
	s.id.mu.Lock()
	s.id.id = id
	s.id.mu.Unlock()
	s.stream.adopt(id)
	s.conn.router.adopted(id, s)
}

// PID is the local process acpdrive watches (the runtime, or on SSH the
// local ssh relay), or 0 before one was started or when none exists.
func (s *Session) PID() int { return s.conn.rt.pid() }

// Identity names the runtime as the transport started it; the zero value
// before a start.
func (s *Session) Identity() ports.Identity { return s.conn.rt.identity() }

// Remote reports whether the runtime runs on another host.
func (s *Session) Remote() bool { return s.conn.rt.target.Remote() }

// Host is the host the runtime runs on, "" on this machine.
func (s *Session) Host() string { return s.conn.rt.target.Host }

// Capabilities returns a copy of the session's capability record.
func (s *Session) Capabilities() domain.Capabilities { return s.caps.snapshot() }

// AgentInfo returns what the handshake reported about the runtime.
func (s *Session) AgentInfo() domain.AgentInfo { return s.res.agent }

// Route reports how the session was resolved: "session/new",
// "session/load", "session/resume" or "session/fork".
func (s *Session) Route() string { return s.res.route }

// LastMessage returns the latest completed agent message, cut to
// domain.MessageCap runes. A turn's whole reply is its TurnResult.Reply.
func (s *Session) LastMessage() domain.Message { return s.stream.last() }

// Totals returns the session's totals so far: every turn's usage summed
// figure by figure over the measured turns, and cost per currency
// (docs/behaviour.md#token-accounting). fmt.Print prints them on one line.
func (s *Session) Totals() domain.Totals { return s.totals.snapshot() }

// started is the event that opens a turn the caller asked for.
func started() domain.Event {
	return domain.Event{Type: domain.EventSessionStarted, Message: domain.MsgSessionStarted}
}
