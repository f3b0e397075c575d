// Package mcp implements ports.MCPRenderer: it parses an MCP server
// configuration file in the common mcp.json format and renders its servers
// into the wire shapes ACP's session/new (and session/load, session/resume)
// carry in mcpServers.
//
// The file format is a JSON object whose mcpServers member maps a server
// name to its declaration:
//
//	{"mcpServers": {
//	  "fs":  {"command": "/usr/bin/mcp-fs", "args": ["--root", "."], "env": {"LOG": "1"}},
//	  "api": {"type": "http", "url": "https://api.example/mcp", "headers": {"Authorization": "Bearer t"}},
//	  "old": {"type": "sse", "url": "https://old.example/sse", "enabled": false}
//	}}
//
// A server is stdio when its type is "stdio", or when type is absent and it
// has a command; http when its type is "http", or when type is absent and it
// has a url but no command; sse when its type is "sse". A server whose
// enabled member is present and false is dropped. Members other than type,
// command, args, env, url, headers and enabled are ignored. Server order,
// env order and header order follow the file.
//
// Rendering keeps every stdio server (the protocol has no way to decline
// stdio), and withholds an http server unless the handshake advertised
// mcpCapabilities.http, an sse server unless it advertised
// mcpCapabilities.sse. A remote launch renders nothing: the caller passes
// no path (see Renderer.Render).
//
// The worker side merges the operator's agent-client-protocol.mcp_config
// file with its own reserved tools entry (Merge) and writes the generated
// file (WriteFile) that session start later renders.
//
// Every fault names the file and what is wrong with it (FileError); input
// is bounded in size (MaxFileBytes) and nesting (MaxDepth), and must be
// UTF-8, so hostile input gets a clear error instead of exhausting memory.
package mcp
