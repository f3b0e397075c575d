package dialect

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpclient"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
)

// v1 is ACP v1, schema v1.21.0 (docs/behaviour.md#session-start): its wire
// types are protocol/acpwire's. A turn ends with the session/prompt
// answer; a saved session is continued through the advertised route
// (session/load confirmed by its replay, after the creation-minute hold).
type v1 struct{}

// protocolVersion1 is ACP v1's protocol version.
const protocolVersion1 = acpwire.ProtocolVersion

func (v1) Version() int { return protocolVersion1 }

// InitializeFields: the client's capabilities and implementation in v1's
// shape. acpdrive presents notice updates as runtime notices, so it says
// so (docs/behaviour.md#runtime-notices); it follows subagents when the
// settings ask for them.
func (v1) InitializeFields(c Client) []Field {
	caps := acpwire.ClientCapabilities{Session: acpwire.NoticesOffered()}
	if c.Elicitation {
		caps.Elicitation = acpwire.FormElicitation()
	}
	if c.Subagents {
		caps.Subagents = &acpwire.SubagentCapability{}
	} else if c.FailureChannel {
		caps.Meta = acpwire.SessionFailureOffered()
	}
	return []Field{
		{"protocolVersion", protocolVersion1},
		{"clientCapabilities", caps},
		{"clientInfo", &acpwire.Implementation{Name: c.Name, Version: c.Version}},
	}
}

func (v1) Handshake(raw json.RawMessage) (Handshake, error) {
	var r acpwire.InitializeResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return Handshake{}, decodeError(acpwire.MethodInitialize, err)
	}
	return Handshake(r), nil
}

func (v1) Refusal(answered int, _ domain.ProtocolChoice) error {
	return domain.NewError(domain.KindAgentNotFound,
		fmt.Sprintf("agent reported protocol version %d, want %d", answered, protocolVersion1)).
		WithReason(domain.ReasonProtocolUnsupported)
}

// DecodeUpdate reads v1's session/update: the three *_chunk variants in
// one pass, every other kind in two stages (acpwire.DecodeSessionUpdate).
func (v1) DecodeUpdate(params json.RawMessage) (string, Update, error) {
	return decodeCommon(params)
}

func (v1) Ends() Ending { return EndsWithAnswer }

// Answer reads the stop reason, usage and _meta of v1's prompt result.
func (v1) Answer(raw json.RawMessage) (*TurnEnd, error) {
	var resp acpwire.PromptResponse
	if err := json.Unmarshal(raw, &resp); err != nil {
		return nil, decodeError(acpwire.MethodSessionPrompt, err)
	}
	end := &TurnEnd{StopReason: resp.StopReason, Meta: resp.Meta, Source: domain.SourcePromptResult}
	if len(resp.Usage) > 0 && string(resp.Usage) != "null" {
		var w domain.WireUsage
		if err := json.Unmarshal(resp.Usage, &w); err != nil {
			end.UsageErr = err
		} else {
			end.Usage = &w
		}
	}
	return end, nil
}

func (v1) ChildTrafficIsBaseline() bool { return false }

func (v1) EncodeServers(servers []domain.MCPServer) []json.RawMessage {
	return acpwire.EncodeMCPServers(servers)
}

func (v1) Continuation(route string) (hold, replay bool) {
	load := route == acpwire.MethodSessionLoad
	return load, load
}

func (v1) Continue(ctx context.Context, c *acpclient.Client, route string, req acpwire.LoadSessionRequest) (acpwire.ContinueSessionResponse, error) {
	return c.ContinueWith(ctx, route, req)
}

func (v1) Offer(o domain.SessionOffer) domain.SessionOffer { return o }

func (v1) SelectType() string { return "" }
