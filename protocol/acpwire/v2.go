package acpwire

import (
	"encoding/json"
	"errors"

	"github.com/acpdrive/acpdrive/domain"
)

// ProtocolVersion2 is the ACP v2 draft's protocol version (schema v2).
const ProtocolVersion2 = 2

// Methods that ACP v2 renames or adds.
const (
	// MethodAuthLogin is v2's authenticate.
	MethodAuthLogin = "auth/login"
	// MethodAuthLogout is v2's logout.
	MethodAuthLogout = "auth/logout"
)

// The session/update discriminators ACP v2 adds.
const (
	UpdateStateUpdate  = "state_update"
	UpdateUserMessage  = "user_message"
	UpdateAgentMessage = "agent_message"
	UpdateAgentThought = "agent_thought"
	UpdatePlanUpdate   = "plan_update"
	UpdatePlanRemoved  = "plan_removed"
	// A tool's terminal and content as they stream: activity of the tool
	// call, whose ending is its tool_call_update.
	UpdateTerminalUpdate       = "terminal_update"
	UpdateTerminalOutputChunk  = "terminal_output_chunk"
	UpdateToolCallContentChunk = "tool_call_content_chunk"
)

// The session states of a v2 state_update.
const (
	StateIdle           = "idle"
	StateRunning        = "running"
	StateRequiresAction = "requires_action"
)

// InitializeRequestV2 is the params of a v2 initialize: the client's
// implementation is "info", its capabilities "capabilities" (v2 has no
// client file system and no client terminals, so acpdrive offers none).
type InitializeRequestV2 struct {
	ProtocolVersion int             `json:"protocolVersion"`
	Info            *Implementation `json:"info,omitempty"`
	Capabilities    struct{}        `json:"capabilities"`
	// ClientInfo and ClientCapabilities are v1's shape of the same
	// declaration, sent beside v2's when the client also accepts an
	// answer of 1 (--protocol auto): a runtime that answers 1 reads these.
	ClientInfo         *Implementation     `json:"clientInfo,omitempty"`
	ClientCapabilities *ClientCapabilities `json:"clientCapabilities,omitempty"`
}

// InitializeResponseV2 is a v2 initialize answer.
type InitializeResponseV2 struct {
	ProtocolVersion int                 `json:"protocolVersion"`
	Info            *Implementation     `json:"info,omitempty"`
	Capabilities    AgentCapabilitiesV2 `json:"capabilities"`
	AuthMethods     []AuthMethodV2      `json:"authMethods,omitempty"`
	Meta            json.RawMessage     `json:"_meta,omitempty"`
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
	SessionCapabilities
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
	if marker(rest.Prompt) {
		if err := json.Unmarshal(rest.Prompt, &s.Prompt); err != nil {
			return err
		}
	}
	if marker(rest.MCP) {
		if err := json.Unmarshal(rest.MCP, &s.MCP); err != nil {
			return err
		}
	}
	return nil
}

// AuthMethodV2 is a v2 auth method: its id is "methodId".
type AuthMethodV2 struct {
	MethodID    string `json:"methodId"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Type        string `json:"type,omitempty"`
}

// AsV1 is the v1 record of a v2 answer, so both versions fill the same
// capability record: "session" advertises resume, close and list (the v2
// baseline); v2 has no session/load (its replay is session/resume with
// replayFrom) and no SSE transport.
func (r InitializeResponseV2) AsV1() InitializeResponse {
	out := InitializeResponse{ProtocolVersion: r.ProtocolVersion, AgentInfo: r.Info, Meta: r.Meta}
	ac := &out.AgentCapabilities
	ac.Auth, ac.Providers, ac.Meta = r.Capabilities.Auth, r.Capabilities.Providers, r.Capabilities.Meta
	if s := r.Capabilities.Session; s != nil {
		sc := s.SessionCapabilities
		sc.All = make(map[string]json.RawMessage, len(s.All))
		for k, v := range s.All {
			if k != "prompt" && k != "mcp" { // read into the v1 prompt and MCP records
				sc.All[k] = v
			}
		}
		on := json.RawMessage("{}")
		sc.Resume, sc.Close, sc.List = on, on, on
		ac.SessionCapabilities = &sc
		if p := s.Prompt; p != nil {
			ac.PromptCapabilities = PromptCapabilities{Image: marker(p.Image), Audio: marker(p.Audio), EmbeddedContext: marker(p.EmbeddedContext)}
		}
		if s.MCP != nil {
			ac.MCPCapabilities.HTTP = marker(s.MCP.HTTP)
		}
	}
	for _, m := range r.AuthMethods {
		out.AuthMethods = append(out.AuthMethods, AuthMethod{ID: m.MethodID, Name: m.Name, Description: m.Description, Type: m.Type})
	}
	return out
}

// PromptAccepted is a v2 session/prompt answer: the prompt was taken, not
// finished. The draft schema's answer is empty; runtimes send the user
// message's id.
type PromptAccepted struct {
	MessageID string `json:"messageId,omitempty"`
}

// StateUpdate is the payload of a v2 state_update: idle carries the stop
// reason of the foreground work it ends, its usage, and, for stop reason
// "error", the JSON-RPC error v1 would have answered the prompt with.
type StateUpdate struct {
	State      string          `json:"state"`
	StopReason string          `json:"stopReason,omitempty"`
	Usage      *UsageV2        `json:"usage,omitempty"`
	Error      *StateError     `json:"error,omitempty"`
	Meta       json.RawMessage `json:"_meta,omitempty"`
}

// StateError is the error of an idle with stop reason "error".
type StateError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
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

// Wire is the usage as the protocol measurement source reads it
// (domain.WireUsage): v2 requires the input, output and total counters,
// the others are present only when sent.
func (u UsageV2) Wire() domain.WireUsage {
	in, out, total := int64(u.InputTokens), int64(u.OutputTokens), int64(u.TotalTokens)
	w := domain.WireUsage{InputTokens: &in, OutputTokens: &out, TotalTokens: &total}
	w.ThoughtTokens = optionalCount(u.ThoughtTokens)
	w.CachedReadTokens = optionalCount(u.CachedReadTokens)
	w.CachedWriteTokens = optionalCount(u.CachedWriteTokens)
	return w
}

func optionalCount(v *uint64) *int64 {
	if v == nil {
		return nil
	}
	n := int64(*v)
	return &n
}

// ErrNoState reports a state_update without a state.
var ErrNoState = errors.New("state_update has no state")

// DecodeStateUpdate reads a session/update's params when its update is a
// state_update; ok is false for every other update.
func DecodeStateUpdate(params json.RawMessage) (sessionID string, su StateUpdate, ok bool, err error) {
	var n struct {
		SessionID string `json:"sessionId"`
		Update    struct {
			SessionUpdate string `json:"sessionUpdate"`
			StateUpdate
		} `json:"update"`
	}
	if json.Unmarshal(params, &n) != nil || n.Update.SessionUpdate != UpdateStateUpdate {
		return "", StateUpdate{}, false, nil
	}
	if n.Update.State == "" {
		return n.SessionID, n.Update.StateUpdate, true, ErrNoState
	}
	return n.SessionID, n.Update.StateUpdate, true, nil
}

// ReplayCursor is a v2 session/resume's replayFrom: {"type":"start"}
// replays the whole conversation before the answer.
type ReplayCursor struct {
	Type string `json:"type"`
}

// ResumeRequestV2 is the params of a v2 session/resume; a nil ReplayFrom
// asks for no replay.
type ResumeRequestV2 struct {
	SessionID  string            `json:"sessionId"`
	CWD        string            `json:"cwd"`
	MCPServers []json.RawMessage `json:"mcpServers"`
	ReplayFrom *ReplayCursor     `json:"replayFrom,omitempty"`
	// AdditionalDirectories and SystemPrompt are sent only when set, as on
	// session/new (docs/behaviour.md#session-configuration).
	AdditionalDirectories []string      `json:"additionalDirectories,omitempty"`
	SystemPrompt          *SystemPrompt `json:"systemPrompt,omitempty"`
}

// EncodeMCPServersV2 encodes servers for a v2 setup request: v2 requires
// a "type" on every transport, "stdio" included.
func EncodeMCPServersV2(servers []domain.MCPServer) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(servers))
	for _, s := range servers {
		if s.Transport == domain.MCPStdio || s.Transport == "" {
			out = append(out, encodeNoEscape(struct {
				Type string `json:"type"`
				mcpServerStdio
			}{"stdio", mcpServerStdio{Name: s.Name, Command: s.Command, Args: orEmpty(s.Args), Env: orEmpty(s.Env)}}))
			continue
		}
		out = append(out, encodeMCPServer(s))
	}
	return out
}
