package domain

// Events and states of child sessions: the subagents a runtime runs as
// sessions of their own when the client declares
// clientCapabilities.subagents
// (docs/behaviour.md#sessions-as-resources-and-child-sessions).
const (
	// EventChildStarted announces a child session: its id (SessionID),
	// its parent's (ParentSessionID), title and description (Child).
	EventChildStarted EventType = "child_started"
	// EventChildState reports a child's new work state (Child.State), and
	// when its work ended the stop reason and error text.
	EventChildState EventType = "child_state"
)

// Work states of a child session (ChildInfo.State), as the runtime
// reports them.
const (
	ChildRunning        = "running"
	ChildRequiresAction = "requires_action"
	ChildIdle           = "idle"
	ChildUnknown        = "unknown"
)

// ChildInfo describes a child session on child_started and child_state.
type ChildInfo struct {
	// Title and Description are the runtime's labels for the child.
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// State is the child's work state: running, requires_action, idle or
	// unknown.
	State string `json:"state"`
	// StopReason is how the child's work ended (end_turn, cancelled,
	// error), when it is idle.
	StopReason string `json:"stop_reason,omitempty"`
	// Error is the error text the runtime gave for a child whose work
	// failed.
	Error string `json:"error,omitempty"`
}

// ChildStateText is the message of a child_state event: the state, the
// stop reason in parentheses, then the error text.
func ChildStateText(c ChildInfo) string {
	t := c.State
	if c.StopReason != "" {
		t += " (" + c.StopReason + ")"
	}
	if c.Error != "" {
		t += ": " + c.Error
	}
	return t
}
