package acpwire

import (
	"encoding/json"
	"errors"

	"github.com/acpdrive/acpdrive/domain"
)

// The eleven stable session/update discriminators of schema v1.21.0.
const (
	UpdateUserMessageChunk        = "user_message_chunk"
	UpdateAgentMessageChunk       = "agent_message_chunk"
	UpdateAgentThoughtChunk       = "agent_thought_chunk"
	UpdateToolCall                = "tool_call"
	UpdateToolCallUpdate          = "tool_call_update"
	UpdatePlan                    = "plan"
	UpdateAvailableCommandsUpdate = "available_commands_update"
	UpdateCurrentModeUpdate       = "current_mode_update"
	UpdateConfigOptionUpdate      = "config_option_update"
	UpdateSessionInfoUpdate       = "session_info_update"
	UpdateUsageUpdate             = "usage_update"
)

// UpdateNotice is the unstable notice variant ({severity, title,
// description?}); it needs no client capability, so a v1 client meets it.
const UpdateNotice = "notice"

// ErrNoDiscriminator reports an update object without a string sessionUpdate.
var ErrNoDiscriminator = errors.New("session update has no sessionUpdate discriminator")

// SessionNotification is the params of session/update, first stage: the
// update itself stays raw until its discriminator is known.
type SessionNotification struct {
	SessionID string          `json:"sessionId"`
	Update    json.RawMessage `json:"update"`
}

// ContentChunk is the payload of the three *_chunk variants.
type ContentChunk struct {
	Content   ContentBlock    `json:"content"`
	MessageID string          `json:"messageId,omitempty"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// chunkMeta is the part of a chunk's _meta that marks a runtime's notice:
// the Claude agent adapter sends its warnings as agent_message_chunk with
// _meta.claudeCode.kind "informational".
type chunkMeta struct {
	ClaudeCode *struct {
		Kind string `json:"kind"`
	} `json:"claudeCode"`
}

// Informational reports whether the chunk is marked as a runtime's notice
// rather than the agent's reply (on the chunk's or its content's _meta).
func (c *ContentChunk) Informational() bool {
	return informational(c.Meta) || informational(c.Content.Meta)
}

func informational(meta json.RawMessage) bool {
	if len(meta) == 0 {
		return false
	}
	var m chunkMeta
	return json.Unmarshal(meta, &m) == nil && m.ClaudeCode != nil && m.ClaudeCode.Kind == "informational"
}

// ToolCall is the payload of tool_call and tool_call_update. For an update
// every field but ToolCallID may be absent; pointers tell absent from empty.
type ToolCall struct {
	ToolCallID string  `json:"toolCallId"`
	Title      *string `json:"title,omitempty"`
	Kind       *string `json:"kind,omitempty"`
	Status     *string `json:"status,omitempty"`
}

// Tool call statuses of ACP v1.
const (
	ToolStatusPending    = "pending"
	ToolStatusInProgress = "in_progress"
	ToolStatusCompleted  = "completed"
	ToolStatusFailed     = "failed"
)

// Plan is the payload of the plan variant: the complete list of entries
// (decoded straight into the domain's entries).
type Plan struct {
	Entries []domain.PlanEntry `json:"entries"`
}

// UsageUpdate is the payload of usage_update: context-window figures, not
// billing; acpdrive takes no token figure from it.
type UsageUpdate struct {
	Used uint64 `json:"used"`
	Size uint64 `json:"size"`
	// Cost is the session's cumulative cost (decoded straight into the
	// domain's).
	Cost *domain.Cost `json:"cost,omitempty"`
}

// AvailableCommand is one command of available_commands_update.
type AvailableCommand struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// AvailableCommandsUpdate is the payload of available_commands_update: the
// complete list.
type AvailableCommandsUpdate struct {
	AvailableCommands []AvailableCommand `json:"availableCommands"`
}

// CurrentModeUpdate is the payload of current_mode_update.
type CurrentModeUpdate struct {
	CurrentModeID string `json:"currentModeId"`
}

// ConfigOptionUpdate is the payload of config_option_update: the complete
// list of options.
type ConfigOptionUpdate struct {
	ConfigOptions []ConfigOption `json:"configOptions"`
}

// SessionInfoUpdate is the payload of session_info_update: only changed
// fields; a null title clears it.
type SessionInfoUpdate struct {
	Title     *string `json:"title,omitempty"`
	UpdatedAt *string `json:"updatedAt,omitempty"`
	// Meta is the update's _meta object, where runtimes announce their
	// own retries of a provider failure.
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// Notice is the payload of the unstable notice variant.
type Notice struct {
	Severity    string `json:"severity"`
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
}

// Update is a decoded session/update payload.
type Update struct {
	// Kind is the sessionUpdate discriminator as sent.
	Kind string
	// Known reports whether Kind is one of the eleven stable variants,
	// subagent_update, session_message or
	// the unstable notice.
	Known bool
	// Chunk is set for the three *_chunk variants.
	Chunk *ContentChunk
	// ToolCall is set for tool_call and tool_call_update.
	ToolCall *ToolCall
	// Plan is set for plan.
	Plan *Plan
	// Usage is set for usage_update.
	Usage *UsageUpdate
	// Commands is set for available_commands_update.
	Commands *AvailableCommandsUpdate
	// Mode is set for current_mode_update.
	Mode *CurrentModeUpdate
	// Config is set for config_option_update.
	Config *ConfigOptionUpdate
	// Info is set for session_info_update.
	Info *SessionInfoUpdate
	// Notice is set for notice.
	Notice *Notice
	// Subagent is set for subagent_update.
	Subagent *SubagentUpdate
	// Raw is the undecoded payload of usage_update and of unknown kinds.
	Raw json.RawMessage
}

type discriminator struct {
	SessionUpdate *string `json:"sessionUpdate"`
}

// DecodeUpdate decodes one session/update payload in two stages. An unknown
// discriminator is not an error: it returns Known=false with Raw set. A
// known discriminator whose payload does not match its schema is an error.
func DecodeUpdate(raw json.RawMessage) (Update, error) {
	var d discriminator
	if err := json.Unmarshal(raw, &d); err != nil {
		return Update{}, err
	}
	if d.SessionUpdate == nil {
		return Update{}, ErrNoDiscriminator
	}
	u := Update{Kind: *d.SessionUpdate, Known: true}
	var err error
	switch u.Kind {
	case UpdateUserMessageChunk, UpdateAgentMessageChunk, UpdateAgentThoughtChunk:
		u.Chunk = new(ContentChunk)
		err = json.Unmarshal(raw, u.Chunk)
	case UpdateToolCall, UpdateToolCallUpdate:
		u.ToolCall = new(ToolCall)
		err = json.Unmarshal(raw, u.ToolCall)
		if err == nil && u.ToolCall.ToolCallID == "" {
			err = errors.New("tool call update has no toolCallId")
		}
	case UpdatePlan:
		u.Plan = new(Plan)
		err = json.Unmarshal(raw, u.Plan)
	case UpdateUsageUpdate:
		u.Usage = new(UsageUpdate)
		err = json.Unmarshal(raw, u.Usage)
		u.Raw = cloneRaw(raw)
	case UpdateAvailableCommandsUpdate:
		u.Commands = new(AvailableCommandsUpdate)
		err = json.Unmarshal(raw, u.Commands)
	case UpdateCurrentModeUpdate:
		u.Mode = new(CurrentModeUpdate)
		err = json.Unmarshal(raw, u.Mode)
	case UpdateConfigOptionUpdate:
		u.Config = new(ConfigOptionUpdate)
		err = json.Unmarshal(raw, u.Config)
	case UpdateSessionInfoUpdate:
		u.Info = new(SessionInfoUpdate)
		err = json.Unmarshal(raw, u.Info)
	case UpdateNotice:
		u.Notice = new(Notice)
		err = json.Unmarshal(raw, u.Notice)
	case UpdateSubagent:
		u.Subagent = new(SubagentUpdate)
		err = json.Unmarshal(raw, u.Subagent)
		if err == nil && u.Subagent.SessionID == "" {
			err = errors.New("subagent update has no sessionId")
		}
	case UpdateSessionMessage:
		u.Raw = cloneRaw(raw)
	default:
		u.Known = false
		u.Raw = cloneRaw(raw)
	}
	if err != nil {
		return Update{}, err
	}
	return u, nil
}

func cloneRaw(raw json.RawMessage) json.RawMessage {
	return append(json.RawMessage(nil), raw...)
}

// chunkNotification is the one-pass shape of a session/update that carries
// one of the three *_chunk variants, the bulk of every stream.
type chunkNotification struct {
	SessionID string `json:"sessionId"`
	Update    struct {
		SessionUpdate string          `json:"sessionUpdate"`
		MessageID     string          `json:"messageId"`
		Content       *ContentBlock   `json:"content"`
		Meta          json.RawMessage `json:"_meta"`
	} `json:"update"`
}

// DecodeSessionUpdate decodes the params of a session/update notification:
// the session it names and its update. The three *_chunk variants, which
// make up almost every notification of a streamed reply, are read in one
// pass (discriminator and fields together); any other shape goes through
// the two stages of DecodeUpdate, so an unknown variant is still kept raw
// and never misread as a chunk.
func DecodeSessionUpdate(params json.RawMessage) (sessionID string, u Update, err error) {
	if sessionID, u, ok := scanChunk(params); ok {
		return sessionID, u, nil
	}
	return decodeSessionUpdateJSON(params)
}

// DecodeSessionUpdateJSON is DecodeSessionUpdate without its fast path,
// for a caller that tried ScanChunk first.
func DecodeSessionUpdateJSON(params json.RawMessage) (sessionID string, u Update, err error) {
	return decodeSessionUpdateJSON(params)
}

// decodeSessionUpdateJSON is DecodeSessionUpdate with encoding/json only:
// the path of every shape scanChunk does not take.
func decodeSessionUpdateJSON(params json.RawMessage) (sessionID string, u Update, err error) {
	var fast chunkNotification
	if json.Unmarshal(params, &fast) == nil && fast.Update.Content != nil {
		switch kind := fast.Update.SessionUpdate; kind {
		case UpdateUserMessageChunk, UpdateAgentMessageChunk, UpdateAgentThoughtChunk:
			return fast.SessionID, Update{Kind: kind, Known: true,
				Chunk: &ContentChunk{Content: *fast.Update.Content, MessageID: fast.Update.MessageID, Meta: fast.Update.Meta}}, nil
		}
	}
	var n SessionNotification
	if err := json.Unmarshal(params, &n); err != nil {
		return "", Update{}, err
	}
	if len(n.Update) == 0 {
		return n.SessionID, Update{}, ErrNoDiscriminator
	}
	u, err = DecodeUpdate(n.Update)
	return n.SessionID, u, err
}
