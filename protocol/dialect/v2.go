package dialect

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpclient"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

// v2 is the ACP v2 draft (docs/behaviour.md#protocol-v2): initialize in
// v2's shape, the kinds v2 reshaped decoded straight into the neutral
// model, a prompt accepted by its answer and a turn ended by the idle
// state_update, a session continued through session/resume with
// replayFrom, configuration through options only. Its wire types are
// this file's; the kinds it keeps from v1 are read as v1 reads them.
type v2 struct{}

// ProtocolVersion2 is the ACP v2 draft's protocol version (schema v2).
const ProtocolVersion2 = 2

// Methods that ACP v2 renames or adds.
const (
	// MethodAuthLoginV2 is v2's authenticate.
	MethodAuthLoginV2 = "auth/login"
	// MethodAuthLogoutV2 is v2's logout.
	MethodAuthLogoutV2 = "auth/logout"
)

// The session/update discriminators ACP v2 adds.
const (
	UpdateStateUpdateV2  = "state_update"
	UpdateUserMessageV2  = "user_message"
	UpdateAgentMessageV2 = "agent_message"
	UpdateAgentThoughtV2 = "agent_thought"
	UpdatePlanUpdateV2   = "plan_update"
	UpdatePlanRemovedV2  = "plan_removed"
	// A tool's terminal and content as they stream: activity of the tool
	// call, whose ending is its tool_call_update.
	UpdateTerminalUpdateV2       = "terminal_update"
	UpdateTerminalOutputChunkV2  = "terminal_output_chunk"
	UpdateToolCallContentChunkV2 = "tool_call_content_chunk"
)

// The session states of a v2 state_update.
const (
	StateIdleV2           = "idle"
	StateRunningV2        = "running"
	StateRequiresActionV2 = "requires_action"
)

// msgStateMalformedV2 is the message of a state_update without a state.
const msgStateMalformedV2 = "the agent sent a state_update without a state"

// InitializeResponseV2 is a v2 initialize answer.
type InitializeResponseV2 struct {
	ProtocolVersion int                     `json:"protocolVersion"`
	Info            *acpwire.Implementation `json:"info,omitempty"`
	Capabilities    AgentCapabilitiesV2     `json:"capabilities"`
	AuthMethods     []AuthMethodV2          `json:"authMethods,omitempty"`
	Meta            json.RawMessage         `json:"_meta,omitempty"`
}

// AgentCapabilitiesV2 is a v2 agent's capabilities: "session" present
// means the session baseline (new, list, resume with replay, close,
// prompt, cancel, update).
type AgentCapabilitiesV2 struct {
	Session   *SessionCapabilitiesV2 `json:"session,omitempty"`
	Auth      json.RawMessage        `json:"auth,omitempty"`
	Providers json.RawMessage        `json:"providers,omitempty"`
	Meta      json.RawMessage        `json:"_meta,omitempty"`
}

// SessionCapabilitiesV2 are v2's session capabilities; the markers beyond
// the baseline (delete, fork, additionalDirectories, …) are kept raw.
type SessionCapabilitiesV2 struct {
	acpwire.SessionCapabilities
	Prompt *struct {
		Image           json.RawMessage `json:"image,omitempty"`
		Audio           json.RawMessage `json:"audio,omitempty"`
		EmbeddedContext json.RawMessage `json:"embeddedContext,omitempty"`
	} `json:"prompt,omitempty"`
	MCP *struct {
		HTTP json.RawMessage `json:"http,omitempty"`
	} `json:"mcp,omitempty"`
}

// UnmarshalJSON decodes the markers (as SessionCapabilities does) and the
// prompt and MCP objects.
func (s *SessionCapabilitiesV2) UnmarshalJSON(b []byte) error {
	if err := s.SessionCapabilities.UnmarshalJSON(b); err != nil {
		return err
	}
	var rest struct {
		Prompt json.RawMessage `json:"prompt"`
		MCP    json.RawMessage `json:"mcp"`
	}
	if err := json.Unmarshal(b, &rest); err != nil {
		return err
	}
	if markerV2(rest.Prompt) {
		if err := json.Unmarshal(rest.Prompt, &s.Prompt); err != nil {
			return err
		}
	}
	if markerV2(rest.MCP) {
		if err := json.Unmarshal(rest.MCP, &s.MCP); err != nil {
			return err
		}
	}
	return nil
}

// markerV2 reports whether an object marker is present and not null.
func markerV2(m json.RawMessage) bool { return len(m) > 0 && string(m) != "null" }

// AuthMethodV2 is a v2 auth method: its id is "methodId".
type AuthMethodV2 struct {
	MethodID    string `json:"methodId"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Type        string `json:"type,omitempty"`
}

// record is the handshake's record of a v2 answer: "session" advertises
// resume, close and list (the v2 baseline); v2 has no session/load (its
// replay is session/resume with replayFrom) and no SSE transport.
func (r InitializeResponseV2) record() Handshake {
	out := Handshake{ProtocolVersion: r.ProtocolVersion, AgentInfo: r.Info, Meta: r.Meta}
	ac := &out.AgentCapabilities
	ac.Auth, ac.Providers, ac.Meta = r.Capabilities.Auth, r.Capabilities.Providers, r.Capabilities.Meta
	if s := r.Capabilities.Session; s != nil {
		sc := s.SessionCapabilities
		sc.All = make(map[string]json.RawMessage, len(s.All))
		for k, v := range s.All {
			if k != "prompt" && k != "mcp" { // read into the prompt and MCP records
				sc.All[k] = v
			}
		}
		on := json.RawMessage("{}")
		sc.Resume, sc.Close, sc.List = on, on, on
		ac.SessionCapabilities = &sc
		if p := s.Prompt; p != nil {
			ac.PromptCapabilities = acpwire.PromptCapabilities{Image: markerV2(p.Image), Audio: markerV2(p.Audio), EmbeddedContext: markerV2(p.EmbeddedContext)}
		}
		if s.MCP != nil {
			ac.MCPCapabilities.HTTP = markerV2(s.MCP.HTTP)
		}
	}
	for _, m := range r.AuthMethods {
		out.AuthMethods = append(out.AuthMethods, acpwire.AuthMethod{ID: m.MethodID, Name: m.Name, Description: m.Description, Type: m.Type})
	}
	return out
}

// PromptAcceptedV2 is a v2 session/prompt answer: the prompt was taken,
// not finished. The draft schema's answer is empty; runtimes send the
// user message's id.
type PromptAcceptedV2 struct {
	MessageID string `json:"messageId,omitempty"`
}

// StateUpdateV2 is the payload of a v2 state_update: idle carries the stop
// reason of the foreground work it ends, its usage, and, for stop reason
// "error", the JSON-RPC error v1 would have answered the prompt with.
type StateUpdateV2 struct {
	State      string          `json:"state"`
	StopReason string          `json:"stopReason,omitempty"`
	Usage      *UsageV2        `json:"usage,omitempty"`
	Error      *jsonrpc.Error  `json:"error,omitempty"`
	Meta       json.RawMessage `json:"_meta,omitempty"`
}

// UsageV2 is the usage an idle carries: the turn's token counts.
type UsageV2 struct {
	TotalTokens       uint64  `json:"totalTokens"`
	InputTokens       uint64  `json:"inputTokens"`
	OutputTokens      uint64  `json:"outputTokens"`
	ThoughtTokens     *uint64 `json:"thoughtTokens,omitempty"`
	CachedReadTokens  *uint64 `json:"cachedReadTokens,omitempty"`
	CachedWriteTokens *uint64 `json:"cachedWriteTokens,omitempty"`
}

// wire is the usage as the protocol measurement source reads it
// (domain.WireUsage): v2 requires the input, output and total counters,
// the others are present only when sent.
func (u UsageV2) wire() *domain.WireUsage {
	in, out, total := int64(u.InputTokens), int64(u.OutputTokens), int64(u.TotalTokens)
	w := domain.WireUsage{InputTokens: &in, OutputTokens: &out, TotalTokens: &total}
	w.ThoughtTokens = optionalCountV2(u.ThoughtTokens)
	w.CachedReadTokens = optionalCountV2(u.CachedReadTokens)
	w.CachedWriteTokens = optionalCountV2(u.CachedWriteTokens)
	return &w
}

func optionalCountV2(v *uint64) *int64 {
	if v == nil {
		return nil
	}
	n := int64(*v)
	return &n
}

// ReplayCursorV2 is a v2 session/resume's replayFrom: {"type":"start"}
// replays the whole conversation before the answer.
type ReplayCursorV2 struct {
	Type string `json:"type"`
}

// ResumeRequestV2 is the params of a v2 session/resume; a nil ReplayFrom
// asks for no replay.
type ResumeRequestV2 struct {
	SessionID  string            `json:"sessionId"`
	CWD        string            `json:"cwd"`
	MCPServers []json.RawMessage `json:"mcpServers"`
	ReplayFrom *ReplayCursorV2   `json:"replayFrom,omitempty"`
	// AdditionalDirectories and SystemPrompt are sent only when set, as on
	// session/new (docs/behaviour.md#session-configuration).
	AdditionalDirectories []string              `json:"additionalDirectories,omitempty"`
	SystemPrompt          *acpwire.SystemPrompt `json:"systemPrompt,omitempty"`
}

func (v2) Version() int { return ProtocolVersion2 }

// InitializeFields: the client's implementation is "info", its
// capabilities "capabilities" (v2 has no client file system and no client
// terminals, so acpdrive offers none; the form mode of elicitation when an
// answers policy is set).
func (v2) InitializeFields(c Client) []Field {
	var caps struct {
		Elicitation *acpwire.ElicitationCapabilities `json:"elicitation,omitempty"`
	}
	if c.Elicitation {
		caps.Elicitation = acpwire.FormElicitation()
	}
	return []Field{
		{"protocolVersion", ProtocolVersion2},
		{"info", &acpwire.Implementation{Name: c.Name, Version: c.Version}},
		{"capabilities", caps},
	}
}

// Handshake reads v2's answer into the record; a v2 answer needs info.
func (v2) Handshake(raw json.RawMessage) (Handshake, error) {
	var r InitializeResponseV2
	if err := json.Unmarshal(raw, &r); err != nil {
		return Handshake{}, decodeError(acpwire.MethodInitialize, err)
	}
	if r.Info == nil {
		return Handshake{}, domain.NewError(domain.KindResponseError, "a v2 initialize answer needs info")
	}
	return r.record(), nil
}

// Refusal: a runtime that answers another version fails the start as
// agent_not_found naming the versions (docs/behaviour.md#protocol-v2).
func (v2) Refusal(answered int, choice domain.ProtocolChoice) error {
	return domain.NewError(domain.KindAgentNotFound, fmt.Sprintf(
		"agent answered protocol version %d; --protocol %s accepts only %d", answered, choice, ProtocolVersion2)).
		WithReason(domain.ReasonProtocolUnsupported)
}

// DecodeUpdate reads the kinds v2 keeps as v1 reads them (so the chunks
// that make up a stream cost a v2 session nothing more), and the kinds v2
// adds or reshaped straight into the neutral model
// (docs/behaviour.md#protocol-v2, Updates): user_message, agent_message
// and agent_thought (full content arrays) are one piece of their text,
// plan_update of a plan of items is the plan; plan_removed, a tool's
// terminal and content chunks, and a message without text content say
// only that the runtime is alive.
func (v2) DecodeUpdate(params json.RawMessage) (string, Update, error) {
	if sid, kind, c, ok := acpwire.ScanChunk(params); ok {
		return sid, chunkUpdate(kind, c), nil // the bulk of every stream
	}
	if kind := peekKindV2(params); ownKindV2(kind) {
		// One of v2's own kinds, by the look of it: the envelope and the
		// payload are read once each.
		var n struct {
			SessionID string          `json:"sessionId"`
			Update    json.RawMessage `json:"update"`
		}
		if json.Unmarshal(params, &n) == nil {
			if u, ok, err := decodeOwnV2(kind, n.Update); ok {
				return n.SessionID, u, err
			}
		}
	}
	sid, u, err := decodeCommonJSON(params)
	if err != nil || u.Kind != KindUnknown {
		return sid, u, err
	}
	if own, ok, err := decodeOwnV2(u.Wire.Kind, u.Wire.Raw); ok {
		return sid, own, err
	}
	return sid, u, nil
}

// peekKindV2 is the first "sessionUpdate" string of params, a hint only
// (decodeOwnV2 checks it): "" when there is none to read plainly.
func peekKindV2(params []byte) string {
	const key = `"sessionUpdate"`
	i := bytes.Index(params, []byte(key))
	if i < 0 {
		return ""
	}
	b := bytes.TrimLeft(params[i+len(key):], " \t\r\n")
	if len(b) == 0 || b[0] != ':' {
		return ""
	}
	b = bytes.TrimLeft(b[1:], " \t\r\n")
	if len(b) == 0 || b[0] != '"' {
		return ""
	}
	end := bytes.IndexByte(b[1:], '"')
	if end < 0 {
		return ""
	}
	switch k := b[1 : 1+end]; string(k) {
	case UpdateStateUpdateV2:
		return UpdateStateUpdateV2
	case UpdateUserMessageV2:
		return UpdateUserMessageV2
	case UpdateAgentMessageV2:
		return UpdateAgentMessageV2
	case UpdateAgentThoughtV2:
		return UpdateAgentThoughtV2
	case UpdatePlanUpdateV2:
		return UpdatePlanUpdateV2
	case UpdatePlanRemovedV2, UpdateTerminalUpdateV2, UpdateTerminalOutputChunkV2, UpdateToolCallContentChunkV2:
		return string(k)
	}
	return ""
}

// ownKindV2 reports whether kind is one v2 adds or reshaped.
func ownKindV2(kind string) bool { return kind != "" }

// decodeOwnV2 reads the payload raw of an update of v2's own kind; ok is
// false when kind is none of v2's own, or the payload names another kind.
func decodeOwnV2(kind string, raw json.RawMessage) (u Update, ok bool, err error) {
	u.Wire = acpwire.Update{Kind: kind, Known: true}
	switch kind {
	case UpdateStateUpdateV2:
		var su struct {
			SessionUpdate string `json:"sessionUpdate"`
			StateUpdateV2
		}
		err := json.Unmarshal(raw, &su)
		if err == nil && su.SessionUpdate != kind || err != nil && peeked(raw) != kind {
			return u, false, nil
		}
		if err != nil || su.State == "" {
			u.Kind, u.State = KindState, &State{Malformed: msgStateMalformedV2}
			return u, true, nil
		}
		st := &State{Name: su.State, Idle: su.State == StateIdleV2,
			Busy: su.State == StateRunningV2 || su.State == StateRequiresActionV2,
			End:  TurnEnd{StopReason: su.StopReason, Meta: su.Meta, Error: su.Error, Source: domain.SourceStateUpdate}}
		if su.Usage != nil {
			st.End.Usage = su.Usage.wire()
		}
		u.Kind, u.State = KindState, st
	case UpdateUserMessageV2, UpdateAgentMessageV2, UpdateAgentThoughtV2:
		var m struct {
			SessionUpdate string          `json:"sessionUpdate"`
			MessageID     string          `json:"messageId"`
			Content       json.RawMessage `json:"content"`
		}
		err := json.Unmarshal(raw, &m)
		if err == nil && m.SessionUpdate != kind {
			return u, false, nil
		}
		var content []acpwire.ContentBlock
		if err == nil && len(m.Content) > 0 {
			err = json.Unmarshal(m.Content, &content)
		}
		if err != nil {
			if peeked(raw) != kind {
				return u, false, nil
			}
			return Update{Wire: acpwire.Update{Kind: kind}}, true, err
		}
		text, has := "", false
		for _, b := range content {
			if b.Type == "text" {
				text, has = text+b.Text, true
			}
		}
		switch kind {
		case UpdateUserMessageV2:
			u.Kind = KindUserText
		case UpdateAgentMessageV2:
			u.Kind = KindAgentText
		default:
			u.Kind = KindThought
		}
		if !has && u.Kind != KindUserText {
			u.Kind = KindAlive
			break
		}
		u.Chunk = acpwire.ContentChunk{Content: acpwire.ContentBlock{Type: "text", Text: text}, MessageID: m.MessageID}
	case UpdatePlanUpdateV2:
		var p struct {
			SessionUpdate string `json:"sessionUpdate"`
			Plan          struct {
				Entries json.RawMessage `json:"entries"`
			} `json:"plan"`
		}
		err := json.Unmarshal(raw, &p)
		if err == nil && p.SessionUpdate != kind || err != nil && peeked(raw) != kind {
			return u, false, nil
		}
		if err != nil || len(p.Plan.Entries) == 0 {
			u.Kind = KindAlive
			break
		}
		u.Wire.Plan = new(acpwire.Plan)
		if err := json.Unmarshal(p.Plan.Entries, &u.Wire.Plan.Entries); err != nil {
			return Update{Wire: acpwire.Update{Kind: kind}}, true, err
		}
		u.Kind = KindPlan
	case UpdatePlanRemovedV2, UpdateTerminalUpdateV2, UpdateTerminalOutputChunkV2, UpdateToolCallContentChunkV2:
		// A running tool's output: the runtime is alive, no event (the
		// tool's result is its tool_call_update, as on v1).
		if peeked(raw) != kind {
			return u, false, nil
		}
		u.Kind = KindAlive
	default:
		return u, false, nil
	}
	return u, true, nil
}

func (v2) Ends() Ending { return EndsWithState }

// Answer reads v2's prompt answer: an acceptance, not the turn's end.
func (v2) Answer(raw json.RawMessage) (*TurnEnd, error) {
	var a PromptAcceptedV2
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, decodeError(acpwire.MethodSessionPrompt, err)
	}
	return nil, nil
}

// ChildTrafficIsBaseline: a v2 runtime sends subagent_update and
// session_message as part of its baseline, also to a client that follows
// no children (docs/behaviour.md#sessions-as-resources-and-child-sessions).
func (v2) ChildTrafficIsBaseline() bool { return true }

// EncodeServers: v2 requires a "type" on every transport, "stdio" included.
func (v2) EncodeServers(servers []domain.MCPServer) []json.RawMessage {
	return acpwire.EncodeMCPServersTyped(servers)
}

// Continuation: session/resume is confirmed by what it replays (or its
// state snapshot); there is no creation-minute hold (that is for
// session/load).
func (v2) Continuation(string) (hold, replay bool) { return false, true }

// Continue sends session/resume asking for the whole replay, which
// confirms it as a v1 load is confirmed, and so does the state snapshot
// the runtime sends for the session before its answer
// (docs/behaviour.md#protocol-v2).
func (v2) Continue(ctx context.Context, c *acpclient.Client, _ string, req acpwire.LoadSessionRequest) (acpwire.ContinueSessionResponse, error) {
	return c.ContinueCall(ctx, acpwire.MethodSessionResume, ResumeRequestV2{SessionID: req.SessionID, CWD: req.CWD,
		MCPServers: req.MCPServers, ReplayFrom: &ReplayCursorV2{Type: "start"},
		AdditionalDirectories: req.AdditionalDirectories, SystemPrompt: req.SystemPrompt})
}

// Offer: v2 configures through options only: no session/set_mode, no
// legacy model list (docs/behaviour.md#protocol-v2).
func (v2) Offer(o domain.SessionOffer) domain.SessionOffer {
	o.Modes, o.CurrentMode, o.Models, o.CurrentModel = nil, "", nil, ""
	return o
}

// SelectType: v2 names a select's value by its type.
func (v2) SelectType() string { return "id" }
