package domain

import (
	"time"
	"unicode/utf8"
)

// EventType names a normalized event. Every adapter emits the same
// vocabulary (docs/behaviour.md#events); the values are contract strings.
type EventType string

// Normalized event types.
const (
	// EventSessionStarted opens every turn the caller asked for; callers
	// count turns by it.
	EventSessionStarted EventType = "session_started"
	// EventResultFollowUp opens a follow-up turn acpdrive sends on its own
	// to ask for a structured result the turn before did not deliver
	// (docs/behaviour.md#structured-results), in place of session_started:
	// "follow-up N of M: <why>".
	EventResultFollowUp EventType = "result_follow_up"
	// EventStartupFailed reports a session that could not start.
	EventStartupFailed EventType = "startup_failed"
	// EventTurnCompleted reports a turn that ended normally.
	EventTurnCompleted EventType = "turn_completed"
	// EventTurnFailed reports a turn that ended with a failure.
	EventTurnFailed EventType = "turn_failed"
	// EventTurnCancelled reports a turn this side cancelled.
	EventTurnCancelled EventType = "turn_cancelled"
	// EventTurnEndedWithError reports a turn ended by a transport error.
	EventTurnEndedWithError EventType = "turn_ended_with_error"
	// EventTurnInputRequired reports a turn that needs a person.
	EventTurnInputRequired EventType = "turn_input_required"
	// EventTokenUsage carries measured token figures for a turn.
	EventTokenUsage EventType = "token_usage"
	// EventNotification carries the agent's accumulated message and
	// acpdrive's own notices; Event.Origin tells them apart
	// (docs/behaviour.md#events).
	EventNotification EventType = "notification"
	// EventMessageChunk carries one text chunk of the agent's reply, as it
	// streams (the accumulated message follows as a notification).
	EventMessageChunk EventType = "message_chunk"
	// EventRuntimeNotice carries a notice the runtime sent (a warning, its
	// authentication status): never the agent's reply.
	EventRuntimeNotice EventType = "runtime_notice"
	// EventCommandsAvailable carries the commands the runtime offers.
	EventCommandsAvailable EventType = "commands_available"
	// EventModeChanged carries the session's current mode.
	EventModeChanged EventType = "mode_changed"
	// EventConfigOptions carries the session's configuration options.
	EventConfigOptions EventType = "config_options"
	// EventSessionInfo carries the session's title and update time.
	EventSessionInfo EventType = "session_info"
	// EventContextUsage carries the context window's use and the session's cost.
	EventContextUsage EventType = "context_usage"
	// EventOtherMessage carries reasoning blocks and plan updates.
	EventOtherMessage EventType = "other_message"
	// EventMalformed reports input this client could not interpret.
	EventMalformed EventType = "malformed"
	// EventToolResult reports a completed or failed tool call.
	EventToolResult EventType = "tool_result"
	// EventPermissionDecision reports the answer to one permission request
	// and what decided it (docs/behaviour.md#permission-posture).
	EventPermissionDecision EventType = "permission_decision"
	// EventElicitation reports a question the runtime asked
	// (elicitation/create), whatever it was answered with; Event.Elicitation
	// holds the question, its schema and the answer
	// (docs/behaviour.md#elicitation).
	EventElicitation EventType = "elicitation"
	// EventRuntimeRetrying reports that the runtime is retrying a provider
	// failure on its own (docs/behaviour.md#failures); Event.Retry says
	// which.
	EventRuntimeRetrying EventType = "runtime_retrying"
	// EventSteered reports a message the runtime took into the running
	// turn; Message is its text (docs/behaviour.md#steering).
	EventSteered EventType = "steered"
	// EventSessionReplaced reports that a retry replaced the session's
	// runtime under the same session (docs/behaviour.md#fleet): Message
	// says whether the session was resumed (its history kept) or runs
	// fresh (its history lost), and why.
	EventSessionReplaced EventType = "session_replaced"
)

// Contract messages carried by events.
const (
	// MsgSessionStarted is the message of every session_started event.
	MsgSessionStarted = "session started"
	// MsgReasoningBlock is the other_message text for agent_thought_chunk.
	MsgReasoningBlock = "reasoning block"
	// MsgPlanUpdate is the other_message text for a plan update.
	MsgPlanUpdate = "plan update"
	// MsgNoCommands is the commands_available text for an empty list.
	MsgNoCommands = "no commands"
	// MsgNonTextChunk is the malformed text for a non-text message chunk.
	MsgNonTextChunk = "agent sent a message chunk this client does not render"
	// MsgUnknownUpdate is the malformed text for an unrecognized session/update variant.
	MsgUnknownUpdate = "received a session update of an unrecognized kind"
	// MsgUnparseableLine is the malformed text for a line that is not JSON-RPC.
	MsgUnparseableLine = "received a line that could not be parsed as JSON-RPC"
	// MsgUnimplementedMethod is the malformed text for an agent request
	// naming a method this client does not implement.
	MsgUnimplementedMethod = "the agent called a method this client does not implement"
	// MsgPermissionRefused is the notification for a refused permission request.
	MsgPermissionRefused = "refused a permission request because this run is unattended and no one can approve it"
	// MsgPermissionUngrantable is the notification for a permission request
	// that offers no refusing option.
	MsgPermissionUngrantable = "the agent needs a permission this unattended run cannot grant"
	// MsgElicitation is the notification for an elicitation/create request.
	MsgElicitation = "the agent asked for something only a person could give, and this unattended run has no one to give it: an answer to a question"
	// MsgToolServersGated is the once-per-session notification for a refused
	// permission request in a session that delivered tool servers.
	MsgToolServersGated = "this session delivered tool servers and the agent runtime asked for consent before running a tool; an unattended run grants no consent, so any delivered tool the runtime gates the same way cannot be called unless that runtime's own configuration allows it"
)

// MessageCap is the maximum length, in runes, of an accumulated agent
// message and of a tool result title.
const MessageCap = 500

// ellipsis ends a string cut by TruncateRunes.
const ellipsis = "…"

// Usage is one turn's token figures in the one meaning of every counter
// (docs/behaviour.md#token-accounting), whatever source measured them: a
// figure the runtime does not record is zero; Total is Sum.
type Usage struct {
	// InputTokens is the number of prompt tokens not read from or
	// written to a cache (the protocol's inputTokens).
	InputTokens int64 `json:"input_tokens"`
	// OutputTokens is the number of generated tokens, reasoning included.
	OutputTokens int64 `json:"output_tokens"`
	// CacheReadTokens is the number of input tokens read from a cache.
	CacheReadTokens int64 `json:"cache_read_tokens"`
	// CacheWriteTokens is the number of input tokens written to a cache.
	CacheWriteTokens int64 `json:"cache_write_tokens"`
	// ReasoningTokens is the part of OutputTokens spent reasoning
	// ("thoughts").
	ReasoningTokens int64 `json:"reasoning_tokens"`
	// ToolUseTokens is the number of tool-use prompt tokens, where the
	// runtime records them.
	ToolUseTokens int64 `json:"tool_use_tokens"`
	// TotalTokens is input + cache read + cache write + output + tool use.
	TotalTokens int64 `json:"total_tokens"`
}

// Add returns the figure-by-figure sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:      u.InputTokens + v.InputTokens,
		OutputTokens:     u.OutputTokens + v.OutputTokens,
		CacheReadTokens:  u.CacheReadTokens + v.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + v.CacheWriteTokens,
		ReasoningTokens:  u.ReasoningTokens + v.ReasoningTokens,
		ToolUseTokens:    u.ToolUseTokens + v.ToolUseTokens,
		TotalTokens:      u.TotalTokens + v.TotalTokens,
	}
}

// Event is one normalized event.
type Event struct {
	// Type names the event.
	Type EventType `json:"type"`
	// Time is when the event happened, in UTC.
	Time time.Time `json:"time"`
	// AgentPID is the runtime's process ID, when known.
	AgentPID int `json:"agent_pid,omitempty"`
	// Message is the event's text.
	Message string `json:"message,omitempty"`
	// Origin is set on every notification: OriginAgent for the agent's
	// accumulated message, OriginAcpdrive for acpdrive's own notices
	// (docs/behaviour.md#events).
	Origin string `json:"origin,omitempty"`
	// Outcome is set on the event that closes a turn: the outcome of the
	// turn's domain.TurnResult, in the same words (turn_failed also on a
	// turn_ended_with_error event; docs/behaviour.md#turn-disposition).
	Outcome Outcome `json:"outcome,omitempty"`
	// SessionID is set on session_started, and on every event of a child
	// session: the child's id.
	SessionID string `json:"session_id,omitempty"`
	// SessionRef is set on the session_started of a held session: the
	// reference acpdrive attach takes (docs/behaviour.md#held-sessions).
	SessionRef string `json:"session_ref,omitempty"`
	// ParentSessionID is set on every event of a child session: the id of
	// the session that launched it
	// (docs/behaviour.md#sessions-as-resources-and-child-sessions).
	ParentSessionID string `json:"parent_session_id,omitempty"`
	// Child is set on child_started and child_state.
	Child *ChildInfo `json:"child,omitempty"`
	// Usage is set on token_usage.
	Usage *Usage `json:"usage,omitempty"`
	// Model is set on token_usage.
	Model string `json:"model,omitempty"`
	// Source is set on token_usage: what measured the turn
	// (docs/behaviour.md#token-accounting).
	Source string `json:"source,omitempty"`
	// Cost is set on token_usage when the runtime reports a cumulative
	// session cost: the turn's share of it.
	Cost *Cost `json:"cost,omitempty"`
	// Breakdown is set on token_usage when the runtime attaches per-model
	// figures (side calls included); never the turn's figure.
	Breakdown []ModelUsage `json:"breakdown,omitempty"`
	// ToolName is the normalized tool kind on tool_result.
	ToolName string `json:"tool_name,omitempty"`
	// ToolDurationMS is the tool call's duration on tool_result.
	ToolDurationMS int64 `json:"tool_duration_ms,omitempty"`
	// ToolError reports a failed tool call on tool_result.
	ToolError bool `json:"tool_error,omitempty"`
	// ToolCallID is the runtime's id of the call on tool_result.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// ToolTitle is the call's title on tool_result (also its Message).
	ToolTitle string `json:"tool_title,omitempty"`
	// ToolStatus is the call's terminal status on tool_result: completed
	// or failed.
	ToolStatus string `json:"tool_status,omitempty"`
	// MessageID is the runtime's message id on message_chunk, when sent.
	MessageID string `json:"message_id,omitempty"`
	// Notice describes a runtime_notice: where it came from and how
	// severe the runtime says it is.
	Notice *Notice `json:"notice,omitempty"`
	// Retry is set on runtime_retrying: the failure the runtime retries,
	// its attempt and wait as the runtime said them.
	Retry *RuntimeRetry `json:"retry,omitempty"`
	// Commands is set on commands_available (the complete list).
	Commands []Command `json:"commands,omitempty"`
	// ModeID is set on mode_changed.
	ModeID string `json:"mode_id,omitempty"`
	// ConfigOptions is set on config_options (the complete list).
	ConfigOptions []ConfigOption `json:"config_options,omitempty"`
	// Title is set on session_info when the runtime named the session.
	Title string `json:"title,omitempty"`
	// UpdatedAt is set on session_info when the runtime sent it.
	UpdatedAt string `json:"updated_at,omitempty"`
	// Context is set on context_usage.
	Context *ContextUsage `json:"context,omitempty"`
	// Plan is set on the other_message of a plan update: the complete list.
	Plan []PlanEntry `json:"plan,omitempty"`
	// Thought is set on the other_message of a reasoning block: the text
	// of that thought chunk, cut to MessageCap.
	Thought string `json:"thought,omitempty"`
	// Permission is set on permission_decision: the request, the decision,
	// what decided it and the option sent.
	Permission *PermissionInfo `json:"permission,omitempty"`
	// Elicitation is set on elicitation: the question and its answer.
	Elicitation *ElicitationInfo `json:"elicitation,omitempty"`
}

// Who wrote a notification (Event.Origin).
const (
	// OriginAgent: the agent's accumulated message, part of its reply.
	OriginAgent = "agent"
	// OriginAcpdrive: a notice of acpdrive's own (a capability gap, a
	// refused permission request, the session's posture), never the reply.
	OriginAcpdrive = "acpdrive"
)

// Where a runtime notice came from (Notice.Source).
const (
	// NoticeFromMessage: an agent_message_chunk the runtime marked as
	// informational (the Claude agent adapter's warnings).
	NoticeFromMessage = "agent_message_chunk"
	// NoticeFromUpdate: the notice session update.
	NoticeFromUpdate = "notice"
	// NoticeFromAuthStatus: the _auth/status_update notification.
	NoticeFromAuthStatus = "_auth/status_update"
)

// Notice describes a runtime_notice event.
type Notice struct {
	// Source says what carried it: NoticeFromMessage, NoticeFromUpdate or
	// NoticeFromAuthStatus.
	Source string `json:"source"`
	// Severity is the runtime's own severity, when it sent one.
	Severity string `json:"severity,omitempty"`
}

// Command is one command the runtime offers (available_commands_update).
type Command struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// ConfigOption is one session configuration option and its value.
type ConfigOption struct {
	ID       string `json:"id"`
	Name     string `json:"name,omitempty"`
	Category string `json:"category,omitempty"`
	// Value is the current value as text ("true"/"false" for a boolean).
	Value string `json:"value"`
	// Values lists the values a select offers, groups flattened.
	Values []string `json:"values,omitempty"`
}

// ContextUsage is the context window's use as the runtime reports it
// (usage_update): tokens in context, not a turn's spend.
type ContextUsage struct {
	// Used is the number of tokens in the context window.
	Used uint64 `json:"used"`
	// Size is the context window's size in tokens.
	Size uint64 `json:"size"`
	// Cost is the session's cumulative cost, when the runtime reports one.
	Cost *Cost `json:"cost,omitempty"`
}

// Cost is an amount in a currency (ISO 4217).
type Cost struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

// PlanEntry is one entry of the agent's plan.
type PlanEntry struct {
	Content  string `json:"content"`
	Priority string `json:"priority,omitempty"`
	Status   string `json:"status,omitempty"`
}

// TruncateRunes returns s cut to at most n runes. A cut string ends in "…",
// which counts within the n runes. A non-positive n yields "". Invalid UTF-8
// bytes count as one rune each and are kept as they are.
func TruncateRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n || utf8.RuneCountInString(s) <= n {
		return s
	}
	keep := n - 1
	i := 0
	for ; keep > 0; keep-- {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i] + ellipsis
}
