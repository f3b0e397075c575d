package acpwire

import "encoding/json"

// Methods of sessions as resources (docs/behaviour.md#sessions-as-resources-and-child-sessions).
const (
	// MethodSessionList lists the sessions a runtime keeps, page by page.
	MethodSessionList = "session/list"
	// MethodSessionFork creates a new session from an existing one's
	// history (unstable in the schema).
	MethodSessionFork = "session/fork"
)

// CanFork reports whether session/fork is advertised (the unstable fork
// marker).
func (s *SessionCapabilities) CanFork() bool { return s != nil && marker(s.Fork) }

// ListSessionsRequest is the params of session/list: both fields are
// optional (the first page is asked for with {}).
type ListSessionsRequest struct {
	CWD    string `json:"cwd,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

// ListSessionsResponse is the result of session/list. A missing (or null)
// nextCursor ends the listing.
type ListSessionsResponse struct {
	Sessions   []SessionInfo `json:"sessions"`
	NextCursor *string       `json:"nextCursor,omitempty"`
}

// SessionInfo is one entry of a session/list page.
type SessionInfo struct {
	SessionID             string          `json:"sessionId"`
	CWD                   string          `json:"cwd"`
	Title                 *string         `json:"title,omitempty"`
	UpdatedAt             *string         `json:"updatedAt,omitempty"`
	AdditionalDirectories []string        `json:"additionalDirectories,omitempty"`
	Meta                  json.RawMessage `json:"_meta,omitempty"`
}

// ForkSessionRequest is the params of session/fork: the session whose
// history the new one starts from, and the new one's workspace and MCP
// servers (never null on the wire).
type ForkSessionRequest struct {
	SessionID  string            `json:"sessionId"`
	CWD        string            `json:"cwd"`
	MCPServers []json.RawMessage `json:"mcpServers"`
	// AdditionalDirectories and SystemPrompt are sent only when set, as on
	// session/new (docs/behaviour.md#session-configuration).
	AdditionalDirectories []string      `json:"additionalDirectories,omitempty"`
	SystemPrompt          *SystemPrompt `json:"systemPrompt,omitempty"`
}
