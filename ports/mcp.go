package ports

import (
	"context"

	"github.com/acpdrive/acpdrive/domain"
)

// MCPSource reads the generated MCP configuration file whose servers a
// session declares (docs/behaviour.md#mcp). It only parses: which servers
// a runtime can take is decided by the application from the handshake,
// and the wire encoding belongs to the protocol layer.
type MCPSource interface {
	// Load parses the file at path and returns its enabled servers in
	// file order. A fault is a *domain.AgentError of kind response_error
	// whose message starts "parse MCP config: ".
	Load(ctx context.Context, path string) ([]domain.MCPServer, error)
}
