package ports

import (
	"context"
	"encoding/json"
)

// MCPCapabilities is what the handshake advertised for MCP transports.
type MCPCapabilities struct {
	HTTP bool
	SSE  bool
}

// MCPRenderer turns a generated MCP configuration file into the wire
// declarations session/new (or a continuation call) carries.
type MCPRenderer interface {
	// Render parses the configuration at path and renders the servers the
	// runtime can take. withheld reports whether an HTTP or SSE server was
	// left out because the runtime did not advertise it.
	Render(ctx context.Context, path string, caps MCPCapabilities) (servers []json.RawMessage, withheld bool, err error)
}
