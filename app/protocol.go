package app

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/protocol/acpclient"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
	"github.com/acpdrive/acpdrive/protocol/dialect"
)

// protocol is the part of a session that speaks the protocol version
// initialize settled (docs/behaviour.md#protocol-v2): it holds the
// version's dialect (protocol/dialect), which decodes the wire into the
// neutral model the rest of the session consumes, and the state the
// session reports (the turn a state ends, a resumed session's earlier
// work). Nothing of app names a version: what differs between versions is
// asked of the dialect (TestNoVersionOutsideItsPart, and the module-wide
// guard in test/).
type protocol interface {
	// version is the protocol version the part speaks.
	version() int
	// prompter is how a prompt is accepted and a turn ends, over the
	// wire every version shares.
	prompter(w promptWire) prompter
	// endTurn ends the turn's bookkeeping once the turn engine returned.
	endTurn()
	// encodeServers encodes the delivered MCP servers for the session
	// calls (new, continuation, fork).
	encodeServers(servers []domain.MCPServer) []json.RawMessage
	// continuation says how a saved session is continued through route:
	// whether the creation-minute hold applies, and whether the call is
	// confirmed by what it replays (docs/behaviour.md#session-continuation).
	continuation(route string) (hold, replay bool)
	// continueCall sends the continuation call; watch, set when the
	// call is confirmed by its replay, is what confirms it (or the state
	// the session reports before the answer).
	continueCall(ctx context.Context, client *acpclient.Client, route string, req acpwire.LoadSessionRequest,
		watch *replayWatch) (acpwire.ContinueSessionResponse, error)
	// continued runs once the continuation of session id is confirmed and
	// adopted, before its configuration and first prompt.
	continued(ctx context.Context, id string)
	// offer is what of the session's offer the version configures.
	offer(o domain.SessionOffer) domain.SessionOffer
	// selectType is the "type" a set_config_option of a select value
	// carries, "" for none.
	selectType() string
	// stateUpdate takes, on the reader goroutine, a state the session
	// sid reported (dialect.KindState); false leaves it unrecognized.
	stateUpdate(sid string, u dialect.Update) bool
}

// protocolRef holds the session's part behind an atomic pointer: the
// reader goroutine reads it (otherKind) while the start settles it.
type protocolRef struct{ protocol }

// handshake performs initialize (step 5): one negotiation over the
// registered dialects (dialect.Open) asks in the shape of the version the
// settings' choice asks for, settles the connection's protocol part on the
// version the runtime answered, and records what it advertised.
func (c *connection) handshake(ctx context.Context) error {
	n, err := dialect.Open(c.opts.Settings.Protocol)
	if err != nil {
		return err
	}
	params := n.Params(dialect.Client{Name: c.opts.ClientName, Version: c.opts.ClientVersion,
		Subagents: c.opts.Settings.Subagents, FailureChannel: c.opts.Settings.FailureChannel,
		Elicitation: c.opts.answerPolicy() != nil})
	callCtx, cancel := context.WithTimeout(ctx, c.opts.Settings.InitializeTimeout())
	raw, err := c.rt.client.Call(callCtx, acpwire.MethodInitialize, params)
	cancel()
	if err != nil {
		if verr := versionRefusedFor(err, n.Ask.Version()); verr != nil {
			return verr
		}
		return c.startupError(ctx, acpwire.MethodInitialize, err)
	}
	d, h, err := n.Settle(raw)
	if err != nil {
		var de *acpclient.DecodeError
		if errors.As(err, &de) {
			return c.startupError(ctx, acpwire.MethodInitialize, err)
		}
		return err
	}
	c.dialect = d
	c.agent = agentInfo(acpwire.InitializeResponse(h))
	c.announced = announcedWorkspace(acpwire.InitializeResponse(h))
	return nil
}

// speak settles the session on its connection's dialect — its event
// stream (and its children's) read the wire in it, its protocol part
// speaks it — and records what the handshake advertised.
func (s *Session) speak() {
	s.settle(s.conn.dialect)
	s.handshakeInfo(s.conn.agent)
}

// settle makes d the session's dialect.
func (s *Session) settle(d dialect.Dialect) {
	s.stream.speak(d)
	s.proto.Store(&protocolRef{newSessionProtocol(s, d)})
}

// protocol is the session's protocol part; before initialize settled
// it, the default dialect's (nothing of a version is asked before).
func (s *Session) protocol() protocol {
	if p := s.proto.Load(); p != nil {
		return p.protocol
	}
	return newSessionProtocol(s, dialect.Default())
}

// otherKind is the event stream's hook into the settled part for what the
// stream does not handle itself, the session's state
// (eventStream.otherKind): nothing is taken before initialize settled it.
func (s *Session) otherKind(sessionID string, u dialect.Update) bool {
	p := s.proto.Load()
	return p != nil && p.stateUpdate(sessionID, u)
}

// childKind is the hook a child's stream hands the state its session
// reports through (eventStream.childKind): nothing is taken before
// initialize settled the part.
func (s *Session) childKind(ch *child) func(sessionID string, u dialect.Update) bool {
	return func(_ string, u dialect.Update) bool {
		if s.proto.Load() == nil {
			return false
		}
		return childState(s.stream.kids, ch, u)
	}
}

// prompter is the session's prompter, the settled part's.
func (s *Session) prompter() prompter {
	return s.protocol().prompter(promptWire{rt: s.conn.rt, log: s.log, kids: s.stream.kids})
}

// encodeServers encodes the delivered servers for the version in use.
func (s *Session) encodeServers() []json.RawMessage {
	return s.protocol().encodeServers(s.res.servers)
}

// sessionProtocol is the session's protocol part over its dialect: it
// routes the state the session reports to the running prompt (when the
// dialect's turns end with a state), confirms a continuation by the
// session's state snapshot, and waits for the work a resumed session
// still does from before.
type sessionProtocol struct {
	d           dialect.Dialect
	log         *slog.Logger
	stream      *eventStream
	turns       *turnEngine
	rt          *runtime
	clock       ports.Clock
	readTimeout time.Duration
	sessionID   func() string

	mu       sync.Mutex
	handover chan struct{} // closed once the running prompt is stored
	current  *stateCall
	wg       sync.WaitGroup // each prompt's answer watcher
	watch    *replayWatch   // set while a continuation waits for its confirmation
	state    dialect.State  // the session's latest state (zero before any)
	changed  chan struct{}  // closed (and replaced) when state changes
}

func newSessionProtocol(s *Session, d dialect.Dialect) *sessionProtocol {
	return &sessionProtocol{d: d, log: s.log, stream: s.stream, turns: s.turns, rt: s.conn.rt, clock: s.clock,
		readTimeout: s.opts.Settings.EffectiveReadTimeout(), sessionID: s.ID, changed: make(chan struct{})}
}

func (sp *sessionProtocol) version() int { return sp.d.Version() }

func (sp *sessionProtocol) prompter(w promptWire) prompter {
	if sp.d.Ends() == dialect.EndsWithState {
		return statePrompter{promptWire: w, sp: sp}
	}
	return answerPrompter{promptWire: w, d: sp.d}
}

func (sp *sessionProtocol) encodeServers(servers []domain.MCPServer) []json.RawMessage {
	return sp.d.EncodeServers(servers)
}

func (sp *sessionProtocol) continuation(route string) (hold, replay bool) {
	return sp.d.Continuation(route)
}

// continueCall sends the dialect's continuation call; while it waits, a
// state the session reports confirms it as its replay does.
func (sp *sessionProtocol) continueCall(ctx context.Context, client *acpclient.Client, route string, req acpwire.LoadSessionRequest,
	watch *replayWatch,
) (acpwire.ContinueSessionResponse, error) {
	sp.mu.Lock()
	sp.watch = watch
	sp.mu.Unlock()
	defer func() {
		sp.mu.Lock()
		sp.watch = nil
		sp.mu.Unlock()
	}()
	return sp.d.Continue(ctx, client, route, req)
}

func (sp *sessionProtocol) offer(o domain.SessionOffer) domain.SessionOffer { return sp.d.Offer(o) }

func (sp *sessionProtocol) selectType() string { return sp.d.SelectType() }
