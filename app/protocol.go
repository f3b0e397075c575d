package app

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpclient"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
)

// protocol is the part of a session that speaks one version of ACP
// (docs/behaviour.md#protocol-v2). It is chosen once, when initialize
// settles the version, and the rest of the session asks it for
// everything that differs between versions: how a session is continued
// and configured, how the servers are encoded, how a prompt is accepted
// and a turn ends (its prompter), and how the updates of kinds the event
// stream does not know translate into the one event vocabulary. The
// versions are v1.go and v2.go; adding one is adding its part to
// protocolParts.
type protocol interface {
	// version is the protocol version the part speaks.
	version() int
	// prompter is how a prompt is accepted and a turn ends, over the
	// wire every version shares.
	prompter(w promptWire) prompter
	// endTurn ends the turn's bookkeeping once the turn engine returned.
	endTurn()
	// otherKind takes, on the reader goroutine, an update of a kind the
	// event stream does not know (the eventStream.otherKind hook); false
	// leaves it unrecognized.
	otherKind(kind string, params json.RawMessage) bool
	// childKind takes, on the reader goroutine, an update of a kind the
	// event stream does not know sent under child ch's id (the child
	// stream's otherKind hook); false leaves it unrecognized.
	childKind(kids *children, ch *child, kind string, params json.RawMessage) bool
	// rewrite is the version's pure translation of an update of a kind
	// the event stream does not know into one it knows: out is nil for an
	// update that only says the runtime is alive, ok false for a kind the
	// version does not have either. A child session's stream reads its
	// updates through it, as the parent's do through otherKind.
	rewrite(kind string, params json.RawMessage) (out json.RawMessage, ok bool)
	// encodeServers encodes the delivered MCP servers for the session
	// calls (new, continuation, fork).
	encodeServers(servers []domain.MCPServer) []json.RawMessage
	// continuation says how a saved session is continued through route:
	// whether the creation-minute hold applies, and whether the call is
	// confirmed by what it replays (docs/behaviour.md#session-continuation).
	continuation(route string) (hold, replay bool)
	// continueCall sends the continuation call; watch, set when the
	// call is confirmed by its replay, is what confirms it.
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
}

// protocolPart is one version acpdrive speaks: how initialize asks for
// it, and the session's part once the runtime answered it.
type protocolPart struct {
	version int
	// ask sends initialize in the version's shape, for a choice that
	// requests the version, and checks the answer against the choice.
	ask func(ctx context.Context, c *connection) (acpwire.InitializeResponse, error)
	// make builds the session's part once initialize settled on the
	// version.
	make func(s *Session) protocol
}

// protocolParts lists the versions acpdrive speaks.
func protocolParts() []protocolPart { return []protocolPart{v1Part(), v2Part()} }

// partFor is the part of version v.
func partFor(v int) (protocolPart, bool) {
	for _, p := range protocolParts() {
		if p.version == v {
			return p, true
		}
	}
	return protocolPart{}, false
}

// protocolRef holds the session's part behind an atomic pointer: the
// reader goroutine reads it (otherKind) while the start settles it.
type protocolRef struct{ protocol }

// handshake performs initialize (step 5) in the shape of the version the
// settings request, settles the connection's protocol part on the version
// the runtime answered, and records what it advertised.
func (c *connection) handshake(ctx context.Context) error {
	asked := c.opts.Settings.Protocol.Requested()
	part, ok := partFor(asked)
	if !ok {
		return domain.NewError(domain.KindAgentNotFound, fmt.Sprintf("acpdrive does not speak protocol version %d", asked)).WithReason(domain.ReasonProtocolUnsupported)
	}
	resp, err := part.ask(ctx, c)
	if err != nil {
		return err
	}
	settled, ok := partFor(resp.ProtocolVersion)
	if !ok { // the ask accepts only what the choice accepts
		return domain.NewError(domain.KindAgentNotFound, fmt.Sprintf("acpdrive does not speak protocol version %d", resp.ProtocolVersion)).WithReason(domain.ReasonProtocolUnsupported)
	}
	c.part, c.agent = settled, agentInfo(resp)
	return nil
}

// speak settles the session's protocol part on its connection's and
// records what the handshake advertised.
func (s *Session) speak() {
	s.proto.Store(&protocolRef{s.conn.part.make(s)})
	s.handshakeInfo(s.conn.agent)
}

// protocol is the session's protocol part; before initialize settled
// it, v1's (nothing of a version is asked before).
func (s *Session) protocol() protocol {
	if p := s.proto.Load(); p != nil {
		return p.protocol
	}
	return v1Protocol{}
}

// otherKind is the event stream's hook into the settled part
// (eventStream.otherKind): nothing is taken before initialize settled it.
func (s *Session) otherKind(kind string, params json.RawMessage) bool {
	p := s.proto.Load()
	return p != nil && p.otherKind(kind, params)
}

// childKind is the hook a child's stream reads the kinds of the settled
// part through (eventStream.childKind): nothing is taken before
// initialize settled it.
func (s *Session) childKind(ch *child) func(kind string, params json.RawMessage) bool {
	return func(kind string, params json.RawMessage) bool {
		p := s.proto.Load()
		return p != nil && p.childKind(s.stream.kids, ch, kind, params)
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
