package acpwire

import (
	"bytes"
	"encoding/json"
	"slices"
)

// FSCapabilities advertises file-system methods; acpdrive offers none.
type FSCapabilities struct {
	ReadTextFile  bool `json:"readTextFile"`
	WriteTextFile bool `json:"writeTextFile"`
}

// ClientCapabilities is what the client offers in initialize.
type ClientCapabilities struct {
	FS       FSCapabilities `json:"fs"`
	Terminal bool           `json:"terminal"`
	// Session, when set, offers session-level capabilities (the notices
	// marker, ClientSessionCapabilities).
	Session *ClientSessionCapabilities `json:"session,omitempty"`
	// Elicitation, when set, offers elicitation/create in the modes it
	// names (acpdrive offers the form mode only, when an answers policy
	// is set).
	Elicitation *ElicitationCapabilities `json:"elicitation,omitempty"`
	// Subagents, when set, declares that the client follows subagents
	// as child sessions.
	Subagents *SubagentCapability `json:"subagents,omitempty"`
	// Meta is the capabilities' _meta object (the session failure
	// extension, SessionFailureOffered).
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// ElicitationCapabilities is clientCapabilities.elicitation: a mode is
// offered when its member is a non-null object.
type ElicitationCapabilities struct {
	Form *struct{} `json:"form,omitempty"`
	URL  *struct{} `json:"url,omitempty"`
}

// FormElicitation offers the form mode alone.
func FormElicitation() *ElicitationCapabilities {
	return &ElicitationCapabilities{Form: &struct{}{}}
}

// ElicitationRequest is the params of elicitation/create: a message, a
// mode, the session (and tool call) or request it belongs to, and the
// mode's own members.
type ElicitationRequest struct {
	SessionID       string          `json:"sessionId"`
	ToolCallID      string          `json:"toolCallId"`
	Mode            string          `json:"mode"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema"`
	ElicitationID   string          `json:"elicitationId"`
	URL             string          `json:"url"`
}

// ElicitationResponse is the result of elicitation/create: the action,
// and the form's content on accept.
type ElicitationResponse struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// Implementation names a client or agent implementation.
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// InitializeRequest is the params of initialize.
type InitializeRequest struct {
	ProtocolVersion    int                `json:"protocolVersion"`
	ClientCapabilities ClientCapabilities `json:"clientCapabilities"`
	ClientInfo         *Implementation    `json:"clientInfo,omitempty"`
}

// PromptCapabilities lists the content types a prompt may carry.
type PromptCapabilities struct {
	Image           bool `json:"image"`
	Audio           bool `json:"audio"`
	EmbeddedContext bool `json:"embeddedContext"`
}

// MCPCapabilities lists the MCP transports beyond stdio the agent takes.
type MCPCapabilities struct {
	HTTP bool `json:"http"`
	SSE  bool `json:"sse"`
}

// SessionCapabilities are object markers: present and non-null means
// supported. All keeps every key the runtime sent, known or not.
type SessionCapabilities struct {
	All map[string]json.RawMessage `json:"-"`

	List                  json.RawMessage `json:"list,omitempty"`
	Delete                json.RawMessage `json:"delete,omitempty"`
	AdditionalDirectories json.RawMessage `json:"additionalDirectories,omitempty"`
	Resume                json.RawMessage `json:"resume,omitempty"`
	Close                 json.RawMessage `json:"close,omitempty"`
	Fork                  json.RawMessage `json:"fork,omitempty"`
}

// UnmarshalJSON decodes the known markers and keeps every key in All.
func (s *SessionCapabilities) UnmarshalJSON(b []byte) error {
	type plain SessionCapabilities
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	if err := json.Unmarshal(b, &p.All); err != nil {
		return err
	}
	*s = SessionCapabilities(p)
	return nil
}

// marker reports whether an object marker is present and not null.
func marker(m json.RawMessage) bool {
	return len(m) > 0 && string(m) != "null"
}

// CanClose reports whether session/close is advertised.
func (s *SessionCapabilities) CanClose() bool { return s != nil && marker(s.Close) }

// CanDelete reports whether session/delete is advertised.
func (s *SessionCapabilities) CanDelete() bool { return s != nil && marker(s.Delete) }

// CanResume reports whether session/resume is advertised.
func (s *SessionCapabilities) CanResume() bool { return s != nil && marker(s.Resume) }

// CanList reports whether session/list is advertised.
func (s *SessionCapabilities) CanList() bool { return s != nil && marker(s.List) }

// Advertised lists every key present and not null: the markers of the
// schema in schema order, then every other key the runtime sent, sorted.
func (s *SessionCapabilities) Advertised() []string {
	out := []string{}
	if s == nil {
		return out
	}
	known := map[string]bool{}
	for _, m := range []struct {
		name string
		raw  json.RawMessage
	}{{"list", s.List}, {"delete", s.Delete}, {"additionalDirectories", s.AdditionalDirectories},
		{"resume", s.Resume}, {"close", s.Close}, {"fork", s.Fork}} {
		known[m.name] = true
		if marker(m.raw) {
			out = append(out, m.name)
		}
	}
	var other []string
	for k, v := range s.All {
		if !known[k] && marker(v) {
			other = append(other, k)
		}
	}
	slices.Sort(other)
	return append(out, other...)
}

// Details returns the value of every advertised key whose value is more
// than an empty marker (such as systemPrompt {"mode":{"override":{}}}), in
// compact JSON.
func (s *SessionCapabilities) Details() map[string]string {
	out := map[string]string{}
	if s == nil {
		return out
	}
	for k, v := range s.All {
		if c := compact(v); marker(v) && c != "{}" && c != "true" {
			out[k] = c
		}
	}
	return out
}

// compact is raw in compact form; raw itself when it does not parse.
func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// ObjectKeys lists the keys of a JSON object whose value is not null,
// sorted; nil when raw is no object.
func ObjectKeys(raw json.RawMessage) []string {
	var m map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil || m == nil {
		return nil
	}
	out := make([]string, 0, len(m))
	for k, v := range m {
		if marker(v) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// MetaKeys lists the keys of a _meta object one level deep, sorted: a key
// whose value is an object with keys is listed as "key.sub" per sub key.
func MetaKeys(raw json.RawMessage) []string {
	var m map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
		return nil
	}
	var out []string
	for k, v := range m {
		subs := ObjectKeys(v)
		if len(subs) == 0 {
			out = append(out, k)
			continue
		}
		for _, sub := range subs {
			out = append(out, k+"."+sub)
		}
	}
	slices.Sort(out)
	return out
}

// AgentCapabilities is what the agent advertises in initialize.
type AgentCapabilities struct {
	LoadSession         bool                 `json:"loadSession"`
	PromptCapabilities  PromptCapabilities   `json:"promptCapabilities"`
	MCPCapabilities     MCPCapabilities      `json:"mcpCapabilities"`
	SessionCapabilities *SessionCapabilities `json:"sessionCapabilities,omitempty"`
	// Auth is the auth capability object ({"logout":{}}), raw.
	Auth json.RawMessage `json:"auth,omitempty"`
	// Providers is the providers capability object, raw.
	Providers json.RawMessage `json:"providers,omitempty"`
	// Meta is agentCapabilities._meta, raw.
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// AuthMethod is one authentication method an agent offers.
type AuthMethod struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Type        string `json:"type,omitempty"`
}

// InitializeResponse is the result of initialize.
type InitializeResponse struct {
	ProtocolVersion   int               `json:"protocolVersion"`
	AgentCapabilities AgentCapabilities `json:"agentCapabilities"`
	AgentInfo         *Implementation   `json:"agentInfo,omitempty"`
	AuthMethods       []AuthMethod      `json:"authMethods,omitempty"`
	// Meta is the result's own _meta, raw.
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// NewSessionRequest is the params of session/new. MCPServers is never null
// on the wire.
type NewSessionRequest struct {
	CWD        string            `json:"cwd"`
	MCPServers []json.RawMessage `json:"mcpServers"`
	// AdditionalDirectories and SystemPrompt are sent only when set
	// (docs/behaviour.md#session-configuration).
	AdditionalDirectories []string      `json:"additionalDirectories,omitempty"`
	SystemPrompt          *SystemPrompt `json:"systemPrompt,omitempty"`
}

// NewSessionResponse is the result of session/new.
type NewSessionResponse struct {
	SessionID     string            `json:"sessionId"`
	Modes         *SessionModeState `json:"modes,omitempty"`
	ConfigOptions []ConfigOption    `json:"configOptions,omitempty"`
	Models        *SessionModels    `json:"models,omitempty"`
}

// SessionModeState is the modes of a new session: the current one and
// those available.
type SessionModeState struct {
	CurrentModeID  string        `json:"currentModeId"`
	AvailableModes []SessionMode `json:"availableModes"`
}

// SessionMode is one mode a session can be in.
type SessionMode struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// SessionModels is the (unstable) models of a new session.
type SessionModels struct {
	CurrentModelID  string      `json:"currentModelId"`
	AvailableModels []ModelInfo `json:"availableModels"`
}

// ModelInfo is one model a session can use.
type ModelInfo struct {
	ModelID     string `json:"modelId"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// LoadSessionRequest is the params of session/load and session/resume.
type LoadSessionRequest struct {
	SessionID  string            `json:"sessionId"`
	CWD        string            `json:"cwd"`
	MCPServers []json.RawMessage `json:"mcpServers"`
	// AdditionalDirectories and SystemPrompt are sent only when set
	// (docs/behaviour.md#session-configuration).
	AdditionalDirectories []string      `json:"additionalDirectories,omitempty"`
	SystemPrompt          *SystemPrompt `json:"systemPrompt,omitempty"`
}

// SessionIDParams is the params of session/close, session/delete and
// session/cancel.
type SessionIDParams struct {
	SessionID string `json:"sessionId"`
}

// ContentBlock is a prompt or message content block. Only the text variant
// is produced by this client; Type keeps whatever the agent sent.
type ContentBlock struct {
	Type string          `json:"type"`
	Text string          `json:"text,omitempty"`
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// PromptRequest is the params of session/prompt.
type PromptRequest struct {
	SessionID string         `json:"sessionId"`
	Prompt    []ContentBlock `json:"prompt"`
	// Meta is the request's _meta object, left out when empty. acpdrive
	// puts only the W3C trace context keys there ("traceparent",
	// "tracestate", "baggage", which the ACP schema reserves at its root;
	// docs/behaviour.md#observability).
	Meta map[string]string `json:"_meta,omitempty"`
}

// PromptResponse is the result of session/prompt. StopReason is kept as a
// plain string so unknown values reach the disposition table. Usage and
// Meta stay undecoded: a malformed usage object costs the turn its figure,
// never its disposition (app decodes them, docs/behaviour.md#token-accounting).
type PromptResponse struct {
	StopReason string `json:"stopReason"`
	// Usage is the result's usage object (ACP's end-turn token usage,
	// domain.WireUsage), absent or null when the runtime sent none.
	Usage json.RawMessage `json:"usage,omitempty"`
	// Meta is the result's _meta object.
	Meta json.RawMessage `json:"_meta,omitempty"`
}
