// Package mcp will implement ports.MCPRenderer: parsing the generated MCP
// configuration and rendering its servers into ACP's wire shapes.
//
// It is a placeholder until the MCP issue lands; until then every session
// is created with an empty mcpServers list.
package mcp
