package acpwire

import "encoding/json"

// Subagent session updates (docs/behaviour.md#sessions-as-resources-and-child-sessions):
// a client that declares clientCapabilities.subagents meets each
// subagent as a child session. The parent's subagent_update announces the
// child and reports its work state; session_message carries a message
// between sessions (the prompt that launched the child, in the child's
// transcript).
const (
	UpdateSubagent       = "subagent_update"
	UpdateSessionMessage = "session_message"
)

// Work states of a child session (SubagentState.State).
const (
	SubagentRunning        = "running"
	SubagentRequiresAction = "requires_action"
	SubagentIdle           = "idle"
	SubagentUnknown        = "unknown"
)

// SubagentCapabilities is what the client may do with a child.
type SubagentCapabilities struct {
	// Cancel, present and not null, lets session/cancel name the child.
	Cancel json.RawMessage `json:"cancel,omitempty"`
}

// CanCancel reports whether session/cancel may name the child.
func (c *SubagentCapabilities) CanCancel() bool { return c != nil && marker(c.Cancel) }

// SubagentError is the error a child's work ended with.
type SubagentError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

// SubagentState is a child's work state: running, requires_action (one
// of its requests is open), idle with the stop reason its work ended
// with (and the error, for "error"), or unknown.
type SubagentState struct {
	State      string         `json:"state"`
	StopReason string         `json:"stopReason,omitempty"`
	Error      *SubagentError `json:"error,omitempty"`
}

// SubagentUpdate is the payload of subagent_update, sent on the parent
// session: the child's id, its labels (on the announcement, and when they
// change), what the client may do with it, and its state.
type SubagentUpdate struct {
	SessionID    string                `json:"sessionId"`
	Title        *string               `json:"title,omitempty"`
	Description  *string               `json:"description,omitempty"`
	CWD          string                `json:"cwd,omitempty"`
	Capabilities *SubagentCapabilities `json:"capabilities,omitempty"`
	State        *SubagentState        `json:"state,omitempty"`
}

// SubagentCapability is the clientCapabilities.subagents marker ({}).
type SubagentCapability struct{}
