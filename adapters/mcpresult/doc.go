// Package mcpresult implements ports.ResultServer, the result tool of
// docs/behaviour.md#structured-results, and the MCP server it declares.
//
// The tool is served one of two ways, chosen at Arm for the runtime's
// MCP transports (ports.MCPTransports):
//
//   - Over HTTP from the client's own process (Options.HTTP, to a runtime
//     that advertises mcpCapabilities.http): an MCP server on the official
//     MCP Go SDK behind MCP's Streamable HTTP transport (stateless, JSON
//     responses) on 127.0.0.1 with a port of the system's choice, at the
//     path /acpdrive-result/<token>, the token 256 random bits of this
//     session alone, also declared as the header "Authorization: Bearer
//     <token>". Another path is answered 404, another bearer token 401.
//     A call is validated and kept in this process before it is
//     answered; Release closes the listener and awaits it. No binary is
//     re-executed: this is what a library program uses.
//   - Over stdio, in two processes as in adapters/mcpbeacon (Options.Command,
//     when HTTP is not served): Server (the client side) arms a private
//     directory (mode 0700) holding the schema file and a unix socket only
//     this session listens on, and a random token; the declared stdio
//     server is the configured Command with EnvSocket, EnvToken and
//     EnvSchema in its env. Serve (run by the runtime as its MCP child)
//     offers the tool and writes every call to the socket as one JSON line,
//     {"token":…,"result":…} or {"token":…,"invalid":"<errors>"},
//     acknowledged by the client before the tool call is answered.
//
// Either way the tool is domain.ResultToolName, its input schema the
// session's output schema. A call is validated with
// github.com/google/jsonschema-go: invalid arguments are answered as a
// tool error carrying the validation errors, so the model corrects
// itself; the result (or the last validation error) is known before the
// turn ends. While the session's turn does not ask for the result
// (ports.ArmedResult.Ask(false)), nothing is kept and the call is answered
// domain.MsgResultNotAsked as a tool error, valid or not. Neither
// transport offered (HTTP only, to a runtime without it): Arm returns
// ports.ErrResultNotServed.
//
// The CLI runs Serve as the hidden subcommand `acpdrive mcp-result`. This
// package imports nothing of app.
package mcpresult
