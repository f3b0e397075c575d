package acpwire

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/acpdrive/acpdrive/domain"
)

// mcpServerStdio is McpServerStdio: it carries no type member, and the
// schema requires all four members, so empty lists go out as [].
type mcpServerStdio struct {
	Name    string             `json:"name"`
	Command string             `json:"command"`
	Args    []string           `json:"args"`
	Env     []domain.NameValue `json:"env"`
}

// mcpServerRemote is McpServerHttp and McpServerSse, told apart by type.
type mcpServerRemote struct {
	Type    domain.MCPTransport `json:"type"`
	Name    string              `json:"name"`
	URL     string              `json:"url"`
	Headers []domain.NameValue  `json:"headers"`
}

// EncodeMCPServers returns the McpServer declarations of servers for the
// mcpServers member of session/new, session/load and session/resume, one
// per server and in the same order. The result is never nil, so no
// servers encode as [] rather than null.
//
// A stdio server (Transport MCPStdio or "") becomes
// {"name","command","args","env"} with env as name/value pairs; any other
// server becomes {"type","name","url","headers"} with headers as
// name/value pairs. Empty lists are written as [], and nothing is HTML
// escaped. Choosing which servers a runtime can take
// (domain.MCPServer.Deliverable) is the caller's business: every server
// given is encoded.
func EncodeMCPServers(servers []domain.MCPServer) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(servers))
	for _, s := range servers {
		out = append(out, encodeMCPServer(s))
	}
	return out
}

func encodeMCPServer(s domain.MCPServer) json.RawMessage {
	if s.Transport == domain.MCPStdio || s.Transport == "" {
		return encodeNoEscape(mcpServerStdio{
			Name:    s.Name,
			Command: s.Command,
			Args:    orEmpty(s.Args),
			Env:     orEmpty(s.Env),
		})
	}
	return encodeNoEscape(mcpServerRemote{
		Type:    s.Transport,
		Name:    s.Name,
		URL:     s.URL,
		Headers: orEmpty(s.Headers),
	})
}

// orEmpty turns a nil list into an empty one, which encodes as [].
func orEmpty[T any](list []T) []T {
	if list == nil {
		return []T{}
	}
	return list
}

// encodeNoEscape marshals v with <, > and & left as they are and no
// trailing newline. The values given hold only strings and lists of
// strings, which always encode, so a failure is a programming error.
func encodeNoEscape(v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("acpwire: encode %T: %v", v, err))
	}
	return json.RawMessage(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// EncodeMCPServersTyped encodes servers as EncodeMCPServers does, for a
// schema that requires a "type" on every transport, "stdio" included.
func EncodeMCPServersTyped(servers []domain.MCPServer) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(servers))
	for _, s := range servers {
		if s.Transport == domain.MCPStdio || s.Transport == "" {
			out = append(out, encodeNoEscape(struct {
				Type string `json:"type"`
				mcpServerStdio
			}{"stdio", mcpServerStdio{Name: s.Name, Command: s.Command, Args: orEmpty(s.Args), Env: orEmpty(s.Env)}}))
			continue
		}
		out = append(out, encodeMCPServer(s))
	}
	return out
}
