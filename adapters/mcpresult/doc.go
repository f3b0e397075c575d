// Package mcpresult implements ports.ResultServer, the result tool of
// docs/behaviour.md#structured-results, and the MCP server it declares.
//
// The two halves run in different processes, as in adapters/mcpbeacon:
//
//   - Server (the client side) arms one result server per session: a
//     private directory (mode 0700) holding the schema file and a unix
//     socket only this session listens on, and a random token. The
//     declared stdio server is the configured Command with EnvSocket,
//     EnvToken and EnvSchema in its env.
//   - Serve (run by the runtime as its MCP child) is an MCP server on the
//     official MCP Go SDK offering one tool, domain.ResultToolName, whose
//     input schema is the schema file. A call is validated with
//     github.com/google/jsonschema-go: invalid arguments are answered as a
//     tool error carrying the validation errors, so the model corrects
//     itself; every call is written to the socket as one JSON line,
//     {"token":…,"result":…} or {"token":…,"invalid":"<errors>"},
//     acknowledged by the client before the tool call is answered, so the
//     result (or the last validation error) is known before the turn
//     ends. While the session's turn does not ask for the result
//     (ports.ArmedResult.Ask(false)), the client keeps nothing and answers
//     "not-asked", and the call is answered domain.MsgResultNotAsked as a
//     tool error, valid or not.
//
// The CLI runs Serve as the hidden subcommand `acpdrive mcp-result`. This
// package imports nothing of app.
package mcpresult
