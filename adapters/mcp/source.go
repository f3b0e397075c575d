package mcp

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/acpdrive/acpdrive/adapters/internal/logs"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// MsgParseMCPConfig prefixes the message of the error Load returns for a
// configuration it cannot read or parse (docs/behaviour.md#start-up).
const MsgParseMCPConfig = "parse MCP config"

// Options configures a Source.
type Options struct {
	// Logger receives a debug record per file loaded; nil discards. The
	// record names the file and counts its servers; it never carries a
	// command line, a URL, an environment value or a header.
	Logger *slog.Logger
}

// Source implements ports.MCPSource over files in the mcp.json format.
// It holds no state between calls and is safe for concurrent use.
type Source struct {
	log *slog.Logger
}

var _ ports.MCPSource = (*Source)(nil)

// New returns a Source.
func New(opts Options) *Source {
	return &Source{log: logs.OrDiscard(opts.Logger)}
}

// Load parses the configuration at path and returns its enabled servers
// in file order, as ParseFile does. It decides nothing about delivery:
// every enabled server comes back, whatever its transport.
//
// An empty path names no configuration and loads no servers: the result
// is an empty, non-nil list and no error, and nothing is read.
//
// A file that cannot be read or parsed yields a *domain.AgentError of kind
// response_error whose message is "parse MCP config: <path>: <fault>"
// (ParseError); errors.As finds the *FileError beneath it and errors.Is
// its fault class (ErrUnreadable, ErrTooLarge, ErrInvalidJSON,
// ErrMalformed). A ctx already done yields its error before anything is
// read.
func (s *Source) Load(ctx context.Context, path string) ([]domain.MCPServer, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if path == "" {
		return []domain.MCPServer{}, nil
	}
	servers, err := ParseFile(path)
	if err != nil {
		return nil, ParseError(err)
	}
	s.log.LogAttrs(ctx, slog.LevelDebug, "MCP configuration loaded",
		slog.String("path", path), slog.Int("servers", len(servers)))
	return servers, nil
}

// ParseError turns a parse fault into the session-start error of
// docs/behaviour.md#start-up: kind response_error, message
// "parse MCP config: <err>". The cause chain keeps err.
func ParseError(err error) *domain.AgentError {
	wrapped := fmt.Errorf("%s: %w", MsgParseMCPConfig, err)
	return domain.WrapError(domain.KindResponseError, wrapped.Error(), wrapped)
}
