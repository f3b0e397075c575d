package domain

import (
	"fmt"
	"time"
)

// DefaultConfirmToolServersTimeout is the default bound of the tool-server
// confirmation: how long after the session is created the runtime has to
// start the beacon and complete its MCP initialize
// (docs/behaviour.md#tool-server-confirmation).
const DefaultConfirmToolServersTimeout = 15 * time.Second

// BeaconServerName is the name of the stdio MCP server acpdrive declares
// for the tool-server confirmation. An operator's MCP configuration may not
// declare it while the confirmation is asked for.
const BeaconServerName = "acpdrive-beacon"

// MsgToolServersNotConfirmedPrefix starts the notice of a tool-server
// confirmation that failed; ToolServersNotConfirmed completes it.
const MsgToolServersNotConfirmedPrefix = "tool servers not confirmed: "

// ToolServersNotConfirmed is the notice a session's first turn carries
// when the runtime did not start the beacon and complete its MCP
// initialize within bound of the session's creation
// (docs/behaviour.md#tool-server-confirmation).
func ToolServersNotConfirmed(bound time.Duration) string {
	return fmt.Sprintf("%sthe runtime did not start the stdio MCP server %q that acpdrive declared beside the session's own and complete its MCP initialize within %s of the session's creation, so the declared MCP servers are probably not running either",
		MsgToolServersNotConfirmedPrefix, BeaconServerName, bound)
}

// ToolServerCheck is the verdict of the tool-server confirmation of one
// session (docs/behaviour.md#tool-server-confirmation). A session that did
// not ask for the confirmation, or that cannot deliver servers (a remote
// launch), has none.
type ToolServerCheck struct {
	// Confirmed reports whether the runtime started the beacon and
	// completed its MCP initialize within the bound.
	Confirmed bool `json:"confirmed"`
	// MCPClient is the name/version the runtime's MCP client gave the
	// beacon in initialize, when confirmed.
	MCPClient string `json:"mcp_client,omitempty"`
	// BoundMS is the bound the verdict was reached within, in milliseconds.
	BoundMS int64 `json:"bound_ms"`
	// Reason is the notice text, when not confirmed.
	Reason string `json:"reason,omitempty"`
}

// Notice is the notice the first turn carries for a confirmation that
// failed, "" when there is none (no check, or a confirmed one).
func (c *ToolServerCheck) Notice() string {
	if c == nil || c.Confirmed {
		return ""
	}
	return c.Reason
}
