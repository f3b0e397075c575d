package dialect

import (
	"encoding/json"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

// Kind is what an update says, in no version's words.
type Kind uint8

// The kinds of update.
const (
	// KindUnknown is a kind the dialect does not know (Update.Wire.Kind
	// names it as sent).
	KindUnknown Kind = iota
	// KindAgentText is a piece of the agent's message (Chunk).
	KindAgentText
	// KindUserText is a piece of the user's message (Chunk).
	KindUserText
	// KindThought is a piece of the agent's reasoning (Chunk).
	KindThought
	// KindToolCall starts a tool call (ToolCall).
	KindToolCall
	// KindToolUpdate updates a tool call (ToolCall).
	KindToolUpdate
	// KindPlan is the agent's plan, complete (Plan).
	KindPlan
	// KindCommands, KindMode, KindConfig, KindInfo and KindUsage describe
	// the session (Commands, Mode, Config, Info, Usage).
	KindCommands
	KindMode
	KindConfig
	KindInfo
	KindUsage
	// KindNotice is a runtime's notice (Notice).
	KindNotice
	// KindSubagent announces a child session or reports its state
	// (Subagent).
	KindSubagent
	// KindSessionMessage is a message between sessions.
	KindSessionMessage
	// KindState is the session's work state as the session reports it
	// (State): idle carries the end of the work it ends.
	KindState
	// KindAlive says only that the runtime is alive (a tool's streamed
	// output, a plan removed, a message without text).
	KindAlive
)

// Update is one decoded session/update in the neutral model: Kind says
// what it is; Chunk (a piece of text), the payload fields of Wire
// (ToolCall, Plan, …) or State carry it, already in their final form.
type Update struct {
	Kind Kind
	// Chunk is the piece of text of KindAgentText, KindUserText and
	// KindThought, held by value (the bulk of every stream allocates no
	// record of it).
	Chunk acpwire.ContentChunk
	// Wire holds the other payloads (its Chunk is nil); Wire.Kind is the
	// discriminator as sent (for logs).
	Wire acpwire.Update
	// State is set for KindState.
	State *State
}

// State is a session's work state as the session reports it.
type State struct {
	// Name is the state as sent (idle, running, requires_action, …).
	Name string
	// Busy reports a session at work (running, or waiting on one of its
	// requests); Idle a session whose work ended.
	Busy, Idle bool
	// End is how the work an idle ends ended (its stop reason, usage and
	// error); the stop reason and error are also set on a child's other
	// states when sent.
	End TurnEnd
	// Malformed, when set, is the message of a state that could not be
	// read (no state at all): the update is malformed.
	Malformed string
}

// TurnEnd is how a turn (or a child's work) ended, whether the runtime
// said so in the prompt's answer or in a state update.
type TurnEnd struct {
	// StopReason is the stop reason as sent; "" when none was.
	StopReason string
	// Usage is the turn's token usage on the wire, nil when none was
	// sent; UsageErr is why a usage sent could not be read.
	Usage    *domain.WireUsage
	UsageErr error
	// Source names what measured Usage (domain.SourcePromptResult, …).
	Source string
	// Meta is the end's _meta object (failure markers, per-model figures).
	Meta json.RawMessage
	// Error is the JSON-RPC error the turn ended with (stop reason
	// "error"), nil for none.
	Error *jsonrpc.Error
}

// commonKind maps the discriminators of protocol/acpwire, the kinds every
// version so far has, onto the neutral kinds.
func commonKind(kind string) Kind {
	if kind == acpwire.UpdateAgentMessageChunk { // the bulk of every stream
		return KindAgentText
	}
	switch kind {
	case acpwire.UpdateAgentMessageChunk:
		return KindAgentText
	case acpwire.UpdateUserMessageChunk:
		return KindUserText
	case acpwire.UpdateAgentThoughtChunk:
		return KindThought
	case acpwire.UpdateToolCall:
		return KindToolCall
	case acpwire.UpdateToolCallUpdate:
		return KindToolUpdate
	case acpwire.UpdatePlan:
		return KindPlan
	case acpwire.UpdateAvailableCommandsUpdate:
		return KindCommands
	case acpwire.UpdateCurrentModeUpdate:
		return KindMode
	case acpwire.UpdateConfigOptionUpdate:
		return KindConfig
	case acpwire.UpdateSessionInfoUpdate:
		return KindInfo
	case acpwire.UpdateUsageUpdate:
		return KindUsage
	case acpwire.UpdateNotice:
		return KindNotice
	case acpwire.UpdateSubagent:
		return KindSubagent
	case acpwire.UpdateSessionMessage:
		return KindSessionMessage
	}
	return KindUnknown
}

// decodeCommon decodes a session/update of the kinds every version so far
// has (protocol/acpwire's): the three *_chunk variants in one pass, every
// other kind in two stages (acpwire.DecodeSessionUpdate). A kind it does
// not know is KindUnknown, with its payload kept raw in Wire.Raw.
func decodeCommon(params json.RawMessage) (string, Update, error) {
	if sid, kind, c, ok := acpwire.ScanChunk(params); ok {
		return sid, chunkUpdate(kind, c), nil
	}
	return decodeCommonJSON(params)
}

// chunkUpdate is the update of a chunk ScanChunk read.
func chunkUpdate(kind string, c acpwire.ContentChunk) Update {
	return Update{Kind: commonKind(kind), Chunk: c, Wire: acpwire.Update{Kind: kind, Known: true}}
}

// decodeCommonJSON is decodeCommon past its fast path.
func decodeCommonJSON(params json.RawMessage) (string, Update, error) {
	sid, w, err := acpwire.DecodeSessionUpdateJSON(params)
	if err != nil {
		return sid, Update{Wire: w}, err
	}
	u := Update{Wire: w}
	if w.Known {
		u.Kind = commonKind(w.Kind)
	}
	if w.Chunk != nil {
		u.Chunk, u.Wire.Chunk = *w.Chunk, nil
	}
	return sid, u, nil
}

// peeked is the discriminator of an update object, "" when it has none.
func peeked(raw json.RawMessage) string {
	var d struct {
		SessionUpdate string `json:"sessionUpdate"`
	}
	_ = json.Unmarshal(raw, &d)
	return d.SessionUpdate
}
