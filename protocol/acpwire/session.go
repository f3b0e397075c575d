package acpwire

import "encoding/json"

// FSCapabilities advertises file-system methods; acpdrive offers none.
type FSCapabilities struct {
	ReadTextFile  bool `json:"readTextFile"`
	WriteTextFile bool `json:"writeTextFile"`
}

// ClientCapabilities is what the client offers in initialize.
type ClientCapabilities struct {
	FS       FSCapabilities `json:"fs"`
	Terminal bool           `json:"terminal"`
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

// SessionCapabilities are object markers: present and non-null means supported.
type SessionCapabilities struct {
	List                  json.RawMessage `json:"list,omitempty"`
	Delete                json.RawMessage `json:"delete,omitempty"`
	AdditionalDirectories json.RawMessage `json:"additionalDirectories,omitempty"`
	Resume                json.RawMessage `json:"resume,omitempty"`
	Close                 json.RawMessage `json:"close,omitempty"`
	Fork                  json.RawMessage `json:"fork,omitempty"`
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

// Advertised lists the markers present, in schema order.
func (s *SessionCapabilities) Advertised() []string {
	out := []string{}
	if s == nil {
		return out
	}
	for _, m := range []struct {
		name string
		raw  json.RawMessage
	}{{"list", s.List}, {"delete", s.Delete}, {"additionalDirectories", s.AdditionalDirectories},
		{"resume", s.Resume}, {"close", s.Close}, {"fork", s.Fork}} {
		if marker(m.raw) {
			out = append(out, m.name)
		}
	}
	return out
}

// AgentCapabilities is what the agent advertises in initialize.
type AgentCapabilities struct {
	LoadSession         bool                 `json:"loadSession"`
	PromptCapabilities  PromptCapabilities   `json:"promptCapabilities"`
	MCPCapabilities     MCPCapabilities      `json:"mcpCapabilities"`
	SessionCapabilities *SessionCapabilities `json:"sessionCapabilities,omitempty"`
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
}

// NewSessionRequest is the params of session/new. MCPServers is never null
// on the wire.
type NewSessionRequest struct {
	CWD        string            `json:"cwd"`
	MCPServers []json.RawMessage `json:"mcpServers"`
}

// NewSessionResponse is the result of session/new.
type NewSessionResponse struct {
	SessionID string `json:"sessionId"`
}

// LoadSessionRequest is the params of session/load and session/resume.
type LoadSessionRequest struct {
	SessionID  string            `json:"sessionId"`
	CWD        string            `json:"cwd"`
	MCPServers []json.RawMessage `json:"mcpServers"`
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
// plain string so unknown values reach the disposition table.
type PromptResponse struct {
	StopReason string `json:"stopReason"`
}
