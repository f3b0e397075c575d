package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// MsgParseMCPConfig prefixes the message of the error Render returns for
// a configuration it cannot parse (reference-tables §3).
const MsgParseMCPConfig = "parse MCP config"

// Options configures a Renderer.
type Options struct {
	// Logger receives a debug record per withheld server; nil discards.
	Logger *slog.Logger
}

// Renderer implements ports.MCPRenderer over files in the mcp.json format.
// It holds no state between calls and is safe for concurrent use.
type Renderer struct {
	log *slog.Logger
}

var _ ports.MCPRenderer = (*Renderer)(nil)

// New returns a Renderer.
func New(opts Options) *Renderer {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Renderer{log: log}
}

// Render parses the configuration at path and returns the wire
// declarations of its servers for session/new or a continuation call, in
// file order, with disabled servers dropped and http (sse) servers
// withheld unless caps.HTTP (caps.SSE) is true; withheld reports whether
// any server was withheld that way. Stdio servers are never withheld.
//
// An empty path renders nothing: that is how a caller delivers no servers,
// as on a remote launch, where the file must not be parsed at all. The
// result is then an empty, non-nil list.
//
// A file that cannot be read or parsed yields a *domain.AgentError of kind
// response_error whose message is "parse MCP config: <path>: <fault>";
// errors.As finds the *FileError beneath it. A cancelled ctx yields its
// error before the file is read.
func (r *Renderer) Render(ctx context.Context, path string, caps ports.MCPCapabilities) ([]json.RawMessage, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	if path == "" {
		return []json.RawMessage{}, false, nil
	}
	servers, err := ParseFile(path)
	if err != nil {
		return nil, false, ParseError(err)
	}
	wire, withheld := RenderServers(servers, caps)
	for _, s := range withheld {
		r.log.LogAttrs(ctx, slog.LevelDebug, "MCP server withheld: the agent did not advertise its transport",
			slog.String("server", s.Name), slog.String("transport", string(s.Transport)))
	}
	return wire, len(withheld) > 0, nil
}

// ParseError turns a parse fault into the session-start error of
// reference-tables §3: kind response_error, message
// "parse MCP config: <err>". The cause chain keeps err.
func ParseError(err error) *domain.AgentError {
	wrapped := fmt.Errorf("%s: %w", MsgParseMCPConfig, err)
	return domain.WrapError(domain.KindResponseError, wrapped.Error(), wrapped)
}

// RenderServers renders servers into ACP wire declarations in order,
// leaving out the http servers when caps.HTTP is false, the sse servers
// when caps.SSE is false, and servers of any other transport but stdio;
// those come back as withheld. wire is never nil.
func RenderServers(servers []Server, caps ports.MCPCapabilities) (wire []json.RawMessage, withheld []Server) {
	wire = make([]json.RawMessage, 0, len(servers))
	for _, s := range servers {
		if !deliverable(s.Transport, caps) {
			withheld = append(withheld, s)
			continue
		}
		wire = append(wire, s.Wire())
	}
	return wire, withheld
}

func deliverable(t Transport, caps ports.MCPCapabilities) bool {
	switch t {
	case TransportStdio, "":
		return true
	case TransportHTTP:
		return caps.HTTP
	case TransportSSE:
		return caps.SSE
	}
	return false
}

// wireStdio is ACP's McpServerStdio: no type, all four members required.
type wireStdio struct {
	Name    string   `json:"name"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
	Env     []Pair   `json:"env"`
}

// wireHTTP is ACP's McpServerHttp and McpServerSse.
type wireHTTP struct {
	Type    Transport `json:"type"`
	Name    string    `json:"name"`
	URL     string    `json:"url"`
	Headers []Pair    `json:"headers"`
}

// Wire returns the server's ACP declaration (acp-v1-wire.md §3.1):
// {"name","command","args","env"} for stdio, with env as name/value pairs
// and empty lists written as []; {"type","name","url","headers"} for http
// and sse. An empty Transport counts as stdio.
func (s Server) Wire() json.RawMessage {
	var v any
	if s.Transport == TransportStdio || s.Transport == "" {
		v = wireStdio{Name: s.Name, Command: s.Command, Args: nonNil(s.Args), Env: nonNil(s.Env)}
	} else {
		v = wireHTTP{Type: s.Transport, Name: s.Name, URL: s.URL, Headers: nonNil(s.Headers)}
	}
	return encode(v)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// encode marshals v without HTML escaping and without a trailing newline.
// v holds only strings and slices, so encoding cannot fail.
func encode(v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("mcp: encode %T: %v", v, err))
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
