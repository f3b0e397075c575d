// Package dialect holds the ACP versions acpdrive speaks, one dialect per
// version (docs/behaviour.md#protocol-v2), and the version-neutral model
// they decode the wire into: typed updates (Update), a turn's end as one
// value (TurnEnd) whether it came as a prompt's answer or as a state the
// session reported, and the handshake's record (Handshake).
//
// The session (package app) consumes only that model and asks its
// dialect for everything that differs between versions: how initialize,
// the servers and a continuation are written, how the wire decodes, how
// a turn ends (Ends), what of a session's offer is configured. Nothing
// outside a version's own file names the version
// (test/dialect_guard_test.go); negotiation (Open, Negotiation.Settle)
// is one function over the registered dialects, so a choice such as
// "auto" belongs to none of them.
//
// Adding a version is adding its file (vN.go, its test vN_test.go) and
// its line in All.
package dialect

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpclient"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
)

// All lists the dialects acpdrive speaks, oldest first: one line per
// version.
func All() []Dialect {
	return []Dialect{
		v1{},
		v2{},
	}
}

// For is the dialect of version v.
func For(v int) (Dialect, bool) {
	for _, d := range All() {
		if d.Version() == v {
			return d, true
		}
	}
	return nil, false
}

// Default is the dialect a connection reads before its handshake settled
// one: the oldest (nothing but initialize goes before the handshake).
func Default() Dialect { return All()[0] }

// Ending is how a dialect's turn ends.
type Ending int

const (
	// EndsWithAnswer: the session/prompt answer is the turn's end
	// (Dialect.Answer returns it).
	EndsWithAnswer Ending = iota + 1
	// EndsWithState: the session/prompt answer accepts the prompt; the
	// turn ends at the idle state the session reports (Update.State.End).
	EndsWithState
)

// Client is what the client declares of itself at initialize, in no
// version's shape.
type Client struct {
	Name, Version string
	// Subagents: the client follows child sessions.
	Subagents bool
	// FailureChannel: the client reads a turn's failure marker.
	FailureChannel bool
	// Elicitation: the client answers form-mode questions (an answers
	// policy is set).
	Elicitation bool
}

// Dialect is one ACP version: how it is written and read.
type Dialect interface {
	// Version is the protocol version the dialect speaks.
	Version() int
	// InitializeFields are the fields of an initialize request in the
	// dialect's shape, in their order.
	InitializeFields(c Client) []Field
	// Handshake decodes an initialize answer of the dialect's version.
	Handshake(raw json.RawMessage) (Handshake, error)
	// Refusal is the start's error when the dialect was asked for and the
	// runtime answered version answered (>0), which choice does not
	// accept.
	Refusal(answered int, choice domain.ProtocolChoice) error

	// DecodeUpdate decodes the params of a session/update into the
	// neutral model. A kind the dialect does not know is KindUnknown, not
	// an error; a known kind whose payload does not match is an error.
	DecodeUpdate(params json.RawMessage) (sessionID string, u Update, err error)
	// Ends is how a turn ends.
	Ends() Ending
	// Answer reads a session/prompt answer: the turn's end when the
	// dialect Ends EndsWithAnswer, nil when it only accepts the prompt;
	// an answer that does not decode is a *acpclient.DecodeError.
	Answer(raw json.RawMessage) (*TurnEnd, error)
	// ChildTrafficIsBaseline reports whether the runtime sends its child
	// sessions' updates also to a client that follows none (they are then
	// dropped, not malformed).
	ChildTrafficIsBaseline() bool

	// EncodeServers encodes the delivered MCP servers for the session
	// calls (new, continuation, fork).
	EncodeServers(servers []domain.MCPServer) []json.RawMessage
	// Continuation says how a saved session is continued through route:
	// whether the creation-minute hold applies, and whether the call is
	// confirmed by what it replays (docs/behaviour.md#session-continuation).
	Continuation(route string) (hold, replay bool)
	// Continue sends the continuation call.
	Continue(ctx context.Context, c *acpclient.Client, route string, req acpwire.LoadSessionRequest) (acpwire.ContinueSessionResponse, error)
	// Offer is what of the session's offer the dialect configures.
	Offer(o domain.SessionOffer) domain.SessionOffer
	// SelectType is the "type" a set_config_option of a select value
	// carries, "" for none.
	SelectType() string
}

// Handshake is the record of an accepted initialize answer, whatever the
// version: what the runtime is and advertised (the agent's capabilities in
// their fullest form, every version's markers in one record).
type Handshake acpwire.InitializeResponse

// Field is one field of a request object; a request written from fields
// keeps their order.
type Field struct {
	Name  string
	Value any
}

// fields is an object written from its fields, in order.
type fields []Field

func (fs fields) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, f := range fs {
		if i > 0 {
			b = append(b, ',')
		}
		k, err := json.Marshal(f.Name)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(f.Value)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
}

// Negotiation is one handshake under a protocol choice: the dialect asked
// for and the versions the choice accepts.
type Negotiation struct {
	choice domain.ProtocolChoice
	// Ask is the dialect initialize is asked in.
	Ask    Dialect
	accept []Dialect
}

// Open reads a protocol choice as data over the registered dialects:
// "auto" asks for the newest and accepts each; a version number asks for
// that version and accepts only it. A version no dialect speaks fails the
// start as agent_not_found.
func Open(choice domain.ProtocolChoice) (Negotiation, error) {
	all := All()
	if choice == domain.ProtocolAuto {
		return Negotiation{choice: choice, Ask: all[len(all)-1], accept: all}, nil
	}
	p, err := domain.ParseProtocolChoice(string(choice))
	if err != nil {
		// A choice Validate refuses reads as the default, as everywhere.
		p, _ = domain.ParseProtocolChoice("")
	}
	if v, err := strconv.Atoi(string(p)); err == nil {
		if d, ok := For(v); ok {
			return Negotiation{choice: p, Ask: d, accept: []Dialect{d}}, nil
		}
	}
	return Negotiation{}, domain.NewError(domain.KindAgentNotFound,
		fmt.Sprintf("acpdrive does not speak protocol version %s", p)).WithReason(domain.ReasonProtocolUnsupported)
}

// Params is the initialize request: the asked dialect's fields, then
// each field another accepted dialect declares that the asked one does
// not (a runtime answering that version reads its own shape).
func (n Negotiation) Params(c Client) any {
	out := fields(n.Ask.InitializeFields(c))
	for _, d := range n.accept {
		if d == n.Ask {
			continue
		}
		for _, f := range d.InitializeFields(c) {
			if !slices.ContainsFunc(out, func(g Field) bool { return g.Name == f.Name }) {
				out = append(out, f)
			}
		}
	}
	return out
}

// Settle reads the initialize answer: the version it names must be one the
// choice accepts, and the answer is decoded by that version's dialect.
func (n Negotiation) Settle(raw json.RawMessage) (Dialect, Handshake, error) {
	var v struct {
		ProtocolVersion int `json:"protocolVersion"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, Handshake{}, &acpclient.DecodeError{Method: acpwire.MethodInitialize, Err: err}
	}
	if v.ProtocolVersion <= 0 {
		// An absent (zero) or negative version says no version at all: a
		// malformed answer (docs/behaviour.md#start-up-errors).
		return nil, Handshake{}, domain.NewError(domain.KindResponseError,
			fmt.Sprintf("agent reported protocol version %d, want %d", v.ProtocolVersion, n.Ask.Version()))
	}
	i := slices.IndexFunc(n.accept, func(d Dialect) bool { return d.Version() == v.ProtocolVersion })
	if i < 0 {
		// Another version is no transient failure: the same runtime gives
		// the same answer again.
		return nil, Handshake{}, n.Ask.Refusal(v.ProtocolVersion, n.choice)
	}
	d := n.accept[i]
	h, err := d.Handshake(raw)
	if err != nil {
		return nil, Handshake{}, err
	}
	return d, h, nil
}

// decodeError is a *acpclient.DecodeError of method's answer.
func decodeError(method string, err error) error {
	return &acpclient.DecodeError{Method: method, Err: err}
}
