// Package mcp implements ports.MCPSource: it reads an MCP server
// configuration file in the common mcp.json format and returns the
// servers it declares as domain.MCPServer values. It only parses: which
// servers a runtime can take (domain.MCPServer.Deliverable, and nothing on
// a remote launch) is decided by the application, and the wire encoding
// of ACP's McpServer union lives in protocol/acpwire (EncodeMCPServers).
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
// Source.Load is the session-start side: its faults are the
// *domain.AgentError session start reports (ParseError). ParseFile and
// Parse are the same parser without that wrapping.
//
// The worker side merges the operator's agent-client-protocol.mcp_config
// file with its own reserved tools entry, named DefaultReservedName unless
// the caller picks another (Merge), and writes the generated file
// (WriteFile) that session start later loads. An operator file that
// already declares the reserved name fails with ErrReservedName.
//
// Every fault names the file and what is wrong with it (FileError); input
// is bounded in size (MaxFileBytes) and nesting (MaxDepth), and must be
// UTF-8, so hostile input gets a clear error instead of exhausting memory.
package mcp
