// Package mcpbeacon implements ports.ToolServerBeacon, the tool-server
// confirmation of docs/behaviour.md#tool-server-confirmation, and the
// beacon server it declares.
//
// The two halves run in different processes:
//
//   - Beacon (the client side) arms one beacon per session: a private
//     directory (mode 0700) holding a unix socket that only this session
//     listens on, and a random token. The declared stdio server is the
//     configured Command with two variables in its env, EnvSocket and
//     EnvToken. Sessions never share a socket, so any number of them can
//     run in one process.
//   - Serve (the beacon itself, run by the runtime as its MCP child) is an
//     MCP server on the official MCP Go SDK, over the process's standard
//     streams. It offers nothing at all (no tool, resource or prompt), so
//     the model never sees it: a resource would make Claude Code and Gemini
//     CLI add their MCP resource tools to the model's tool list. Once the
//     runtime's MCP client has completed its handshake (the initialized
//     notification after initialize, or a server/discover under the
//     stateless MCP revision 2026-07-28, which replaces initialize), it
//     connects to the socket and writes one
//     JSON line, {"token":…,"mcp_client":"name/version"}. It exits when
//     its standard input ends.
//
// The CLI runs Serve as the hidden subcommand `acpdrive mcp-beacon`
// (Command is then os.Executable() plus "mcp-beacon"). A program embedding
// the library re-executes itself the same way: its main calls Main when
// its first argument is the one it put in Options.Command (see the
// example). This package imports nothing of app.
package mcpbeacon
