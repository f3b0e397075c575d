package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpclient"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

// v1Part is ACP v1 (docs/behaviour.md#session-start): initialize in v1's
// shape, and the v1 session once a runtime answered 1.
func v1Part() protocolPart {
	return protocolPart{version: acpwire.ProtocolVersion, ask: askV1, make: func(*Session) protocol { return v1Protocol{} }}
}

// v1Capabilities is what a v1 initialize declares of the client:
// acpdrive presents notice updates as runtime notices, so it says so
// (docs/behaviour.md#runtime-notices); it follows subagents when the
// settings ask for them.
func v1Capabilities(c *connection) acpwire.ClientCapabilities {
	caps := acpwire.ClientCapabilities{Session: acpwire.NoticesOffered()}
	if c.opts.Settings.Subagents {
		caps.Subagents = &acpwire.SubagentCapability{}
	} else if c.opts.Settings.FailureChannel {
		caps.Meta = acpwire.SessionFailureOffered()
	}
	return caps
}

// askV1 performs the handshake under "1": it asks for version 1 and
// accepts only 1.
func askV1(ctx context.Context, c *connection) (acpwire.InitializeResponse, error) {
	req := acpwire.InitializeRequest{
		ProtocolVersion:    acpwire.ProtocolVersion,
		ClientCapabilities: v1Capabilities(c),
		ClientInfo:         &acpwire.Implementation{Name: c.opts.ClientName, Version: c.opts.ClientVersion},
	}
	callCtx, cancel := context.WithTimeout(ctx, c.opts.Settings.InitializeTimeout())
	resp, err := c.rt.client.Initialize(callCtx, req)
	cancel()
	if err != nil {
		if verr := versionRefusedFor(err, acpwire.ProtocolVersion); verr != nil {
			return resp, verr
		}
		return resp, c.startupError(ctx, acpwire.MethodInitialize, err)
	}
	if resp.ProtocolVersion != acpwire.ProtocolVersion {
		// Another version is no transient failure: the same runtime gives
		// the same answer again (docs/behaviour.md#start-up-errors). An
		// absent (zero) or negative one says no version at all: a
		// malformed answer, response_error as before.
		kind := domain.KindAgentNotFound
		if resp.ProtocolVersion <= 0 {
			kind = domain.KindResponseError
		}
		e := domain.NewError(kind,
			fmt.Sprintf("agent reported protocol version %d, want %d", resp.ProtocolVersion, acpwire.ProtocolVersion))
		if kind == domain.KindAgentNotFound {
			e.Reason = domain.ReasonProtocolUnsupported
		}
		return resp, e
	}
	return resp, nil
}

// v1Protocol is the session's protocol part on ACP v1: a turn ends with
// the session/prompt response, a saved session is continued through the
// advertised route (session/load confirmed by its replay, after the
// creation-minute hold), and every update kind is v1's. It keeps no state.
type v1Protocol struct{}

func (v1Protocol) version() int { return acpwire.ProtocolVersion }

func (v1Protocol) prompter(w promptWire) prompter { return v1Prompter{w} }

func (v1Protocol) endTurn() {}

func (v1Protocol) otherKind(string, json.RawMessage) bool { return false }

// childKind: a v1 child sends no kind v1 does not have.
func (v1Protocol) childKind(*children, *child, string, json.RawMessage) bool { return false }

func (v1Protocol) rewrite(string, json.RawMessage) (json.RawMessage, bool) { return nil, false }

func (v1Protocol) encodeServers(servers []domain.MCPServer) []json.RawMessage {
	return acpwire.EncodeMCPServers(servers)
}

func (v1Protocol) continuation(route string) (hold, replay bool) {
	load := route == acpwire.MethodSessionLoad
	return load, load
}

func (v1Protocol) continueCall(ctx context.Context, client *acpclient.Client, route string, req acpwire.LoadSessionRequest, _ *replayWatch) (acpwire.ContinueSessionResponse, error) {
	return client.ContinueWith(ctx, route, req)
}

func (v1Protocol) continued(context.Context, string) {}

func (v1Protocol) offer(o domain.SessionOffer) domain.SessionOffer { return o }

func (v1Protocol) selectType() string { return "" }

// v1Prompter is ACP v1's prompter: session/prompt, whose response carries
// the stop reason, and the session/cancel notification.
type v1Prompter struct{ promptWire }

func (p v1Prompter) send(ctx context.Context, req promptRequest) (promptCall, error) {
	pr, err := p.write(ctx, req)
	if err != nil {
		return nil, err
	}
	return v1Call{p: pr, rt: p.rt, log: p.log}, nil
}

// v1Call is a session/prompt in flight.
type v1Call struct {
	p   *acpclient.Prompt
	rt  *runtime
	log *slog.Logger
}

func (c v1Call) Done() <-chan struct{} { return c.p.Done() }
func (c v1Call) Answered() bool        { return c.p.Answered() }
func (c v1Call) forget()               { c.rt.client.Forget(c.p) }

func (c v1Call) settled() {
	if _, err := c.p.Result(); err != nil && !isCallError(err) {
		c.log.Debug("connection ended while the turn settled", "error", err)
	}
}

// result reads the stop reason of the prompt's answer: a JSON-RPC error,
// an answer with both a result and an error, and a lost connection are
// checked first.
func (c v1Call) result() domain.TurnResult {
	resp, err := c.p.Result()
	var callErr *acpclient.CallError
	var decodeErr *acpclient.DecodeError
	switch {
	case errors.As(err, &callErr):
		return domain.FailedResult(domain.WrapError(domain.KindResponseError, callErr.Error(), callErr))
	case errors.Is(err, jsonrpc.ErrAmbiguousResponse):
		return domain.FailedResult(domain.WrapError(domain.KindTurnOutcomeUnknown, domain.MsgPromptAmbiguous, err))
	case errors.As(err, &decodeErr):
		return domain.FailedResult(domain.WrapError(domain.KindTurnOutcomeUnknown, domain.MsgPromptUndecodable, err))
	case err != nil:
		return c.rt.lostConnection(err)
	case resp.StopReason == "":
		return domain.FailedResult(domain.NewError(domain.KindTurnOutcomeUnknown, domain.MsgPromptUndecodable))
	}
	res := domain.Disposition(resp.StopReason, domain.OverrideNone, "")
	applyFailureMarker(&res, resp.Meta)
	if f := ingestWireUsage(decodeWireUsage(resp.Usage, c.log), domain.SourcePromptResult, c.log); f != nil {
		res.Usage, res.Source = &f.usage, f.source
		res.Breakdown = modelBreakdown(resp.Meta)
	}
	return res
}
