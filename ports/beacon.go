package ports

import (
	"context"

	"github.com/acpdrive/acpdrive/domain"
)

// ToolServerBeacon arms the tool-server confirmation
// (docs/behaviour.md#tool-server-confirmation): a stdio MCP server of the
// client's own, declared beside the session's servers, that tells the
// client when the runtime started it and completed MCP initialize.
type ToolServerBeacon interface {
	// Arm prepares the beacon of one session. Every call returns a beacon
	// of its own, so sessions of one process never see each other's.
	Arm(ctx context.Context) (ArmedBeacon, error)
}

// ArmedBeacon is one session's beacon, from Arm to Release.
type ArmedBeacon interface {
	// Server is the stdio server to declare to the runtime.
	Server() domain.MCPServer
	// Initialized is closed once the runtime started the server and
	// completed MCP initialize with it.
	Initialized() <-chan struct{}
	// MCPClient is the name/version the runtime's MCP client sent in
	// initialize; "" before Initialized is closed.
	MCPClient() string
	// Release stops watching and removes whatever Arm created. It is
	// idempotent; the server process itself belongs to the runtime.
	Release() error
}
