package domain

import "strings"

// ToolKind is a tool call's kind, normalized to a closed ten-value set for
// the orchestrator's tool-call metric.
type ToolKind string

// The ten tool kinds.
const (
	// ToolRead reads files or data.
	ToolRead ToolKind = "read"
	// ToolEdit modifies files or content.
	ToolEdit ToolKind = "edit"
	// ToolDelete removes files or data.
	ToolDelete ToolKind = "delete"
	// ToolMove moves or renames files.
	ToolMove ToolKind = "move"
	// ToolSearch searches for information.
	ToolSearch ToolKind = "search"
	// ToolExecute runs commands or code.
	ToolExecute ToolKind = "execute"
	// ToolThink is internal reasoning or planning.
	ToolThink ToolKind = "think"
	// ToolFetch retrieves external data.
	ToolFetch ToolKind = "fetch"
	// ToolSwitchMode switches the session mode.
	ToolSwitchMode ToolKind = "switch_mode"
	// ToolOther is any other, absent or unrecognized kind.
	ToolOther ToolKind = "other"
)

// NormalizeToolKind maps a declared tool kind onto the closed set,
// substituting ToolOther for an absent or unrecognized value. Surrounding
// whitespace and letter case are ignored.
func NormalizeToolKind(s string) ToolKind {
	switch k := ToolKind(strings.ToLower(strings.TrimSpace(s))); k {
	case ToolRead, ToolEdit, ToolDelete, ToolMove, ToolSearch,
		ToolExecute, ToolThink, ToolFetch, ToolSwitchMode:
		return k
	default:
		return ToolOther
	}
}
