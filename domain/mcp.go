package domain

import "log/slog"

// MCPTransport is how an MCP server is reached.
type MCPTransport string

// The transports of the mcp.json format and of ACP's McpServer union.
const (
	// MCPStdio is a subprocess speaking MCP on its standard streams.
	MCPStdio MCPTransport = "stdio"
	// MCPHTTP is MCP's streamable HTTP transport.
	MCPHTTP MCPTransport = "http"
	// MCPSSE is MCP's deprecated HTTP+SSE transport.
	MCPSSE MCPTransport = "sse"
)

// NameValue is one environment variable of a stdio server or one header of
// an HTTP or SSE server.
type NameValue struct {
	// Name is the variable or header name.
	Name string `json:"name"`
	// Value is its value.
	Value string `json:"value"`
}

// Redacted stands for a value that is never written to a log.
const Redacted = "[redacted]"

// LogValue keeps the value out of every log record: an environment
// variable or header (a worker.ssh_pass_env variable, an MCP server's
// credential) is logged by its name only.
func (v NameValue) LogValue() slog.Value {
	return slog.GroupValue(slog.String("name", v.Name), slog.String("value", Redacted))
}

// MCPServer is one tool server a session declares to the runtime
// (docs/behaviour.md#mcp).
type MCPServer struct {
	// Name is the server's name as the runtime will know it.
	Name string
	// Transport is how the server is reached; "" counts as stdio.
	Transport MCPTransport
	// Command is the executable of a stdio server.
	Command string
	// Args are the arguments of a stdio server.
	Args []string
	// Env is the environment of a stdio server, in declaration order.
	Env []NameValue
	// URL is the endpoint of an HTTP or SSE server.
	URL string
	// Headers are the HTTP headers of an HTTP or SSE server.
	Headers []NameValue
}

// Deliverable reports whether a runtime that advertised these MCP
// transports can take the server: stdio always, HTTP and SSE only when
// advertised, anything else never.
func (s MCPServer) Deliverable(http, sse bool) bool {
	switch s.Transport {
	case MCPStdio, "":
		return true
	case MCPHTTP:
		return http
	case MCPSSE:
		return sse
	}
	return false
}
