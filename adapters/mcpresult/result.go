package mcpresult

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"

	"github.com/acpdrive/acpdrive/adapters/internal/logs"
	"github.com/acpdrive/acpdrive/adapters/internal/reportsock"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// The variables the declared server's env carries.
const (
	// EnvSocket is the path of the armed session's unix socket.
	EnvSocket = "ACPDRIVE_RESULT_SOCKET"
	// EnvToken is the armed session's token, 64 hex digits.
	EnvToken = "ACPDRIVE_RESULT_TOKEN"
	// EnvSchema is the path of the schema file.
	EnvSchema = "ACPDRIVE_RESULT_SCHEMA"
)

// SubcommandName is the CLI's hidden subcommand that runs Main.
const SubcommandName = "mcp-result"

// maxReportBytes bounds the one line a report is.
const maxReportBytes = 1 << 20

// The client's answers to a report: kept, or not asked for in the turn
// now running (ports.ArmedResult.Ask).
const (
	ack      = "ok\n"
	notAsked = "not-asked\n"
)

// ErrNoCommand is returned by Arm when Options.Command is empty and the
// server does not serve HTTP.
var ErrNoCommand = errors.New("the result server has no command to re-execute")

// Options configures a Server.
type Options struct {
	// HTTP serves the tool from this process over MCP's Streamable HTTP
	// transport on 127.0.0.1 to a runtime that advertises
	// mcpCapabilities.http: no binary is re-executed
	// (docs/behaviour.md#structured-results). A runtime that does not
	// advertise it gets the stdio server of Command when one is set;
	// else Arm returns ports.ErrResultNotServed and the result is taken
	// from the reply.
	HTTP bool
	// Command is the stdio server's command line: an executable that
	// runs Main on its standard streams, and its arguments. The CLI uses
	// its own executable and SubcommandName. Empty, with HTTP unset: Arm
	// fails with ErrNoCommand.
	Command []string
	// Dir is where the per-session directories are made; "" means
	// os.TempDir().
	Dir string
	// Logger receives debug records; nil discards. A token is never
	// logged.
	Logger *slog.Logger
}

// Server implements ports.ResultServer. It holds no state between calls.
type Server struct {
	opts Options
	log  *slog.Logger
}

var _ ports.ResultServer = (*Server)(nil)

// New returns a Server.
func New(opts Options) *Server {
	return &Server{opts: opts, log: logs.OrDiscard(opts.Logger)}
}

// Arm arms the session's result server and starts listening: over HTTP
// in this process when Options.HTTP is set and the runtime takes HTTP
// (armHTTP), else the stdio server of Options.Command, which reports to
// a private directory's socket. The caller must Release the result.
func (s *Server) Arm(ctx context.Context, schema json.RawMessage, takes ports.MCPTransports) (ports.ArmedResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	hasCommand := len(s.opts.Command) > 0 && s.opts.Command[0] != ""
	switch {
	case s.opts.HTTP && takes.HTTP:
		return s.armHTTP(ctx, schema)
	case hasCommand:
		return s.armStdio(schema)
	case s.opts.HTTP:
		s.log.Debug("the runtime takes no HTTP MCP server and no command is set; the result server is not served")
		return nil, ports.ErrResultNotServed
	}
	return nil, ErrNoCommand
}

// armStdio creates the session's directory, schema file, socket and
// token, and declares the stdio server of Options.Command.
func (s *Server) armStdio(schema json.RawMessage) (ports.ArmedResult, error) {
	a := &armed{log: s.log, asks: true}
	l, err := reportsock.Listen(s.opts.Dir, "acpdrive-result-", "result server", maxReportBytes, s.log, a.report)
	if err != nil {
		return nil, err
	}
	schemaPath := filepath.Join(l.Dir(), "schema.json")
	if err := os.WriteFile(schemaPath, schema, 0o600); err != nil {
		_ = l.Close()
		return nil, fmt.Errorf("result server schema: %w", err)
	}
	a.release = l.Close
	a.where = l.Path()
	a.server = domain.MCPServer{
		Name:      domain.ResultServerName,
		Transport: domain.MCPStdio,
		Command:   s.opts.Command[0],
		Args:      append([]string{}, s.opts.Command[1:]...),
		Env: []domain.NameValue{
			{Name: EnvSocket, Value: l.Path()}, {Name: EnvToken, Value: l.Token()}, {Name: EnvSchema, Value: schemaPath},
		},
	}
	s.log.Debug("result server armed", "socket", l.Path())
	return a, nil
}

// armed is one session's result server.
type armed struct {
	log     *slog.Logger
	release func() error // closes the listener and awaits it; idempotent
	where   string       // the socket's path or the listener's address, for the log
	server  domain.MCPServer

	mu      sync.Mutex // guards result, invalid and asks
	result  json.RawMessage
	invalid string
	asks    bool
}

func (a *armed) Server() domain.MCPServer {
	s := a.server
	s.Args = append([]string{}, s.Args...)
	s.Env = append([]domain.NameValue{}, s.Env...)
	s.Headers = append([]domain.NameValue{}, s.Headers...)
	return s
}

func (a *armed) Ask(asks bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asks = asks
}

func (a *armed) Take() (json.RawMessage, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	r, why := a.result, a.invalid
	a.result, a.invalid = nil, ""
	if r != nil {
		why = ""
	}
	return r, why
}

// Release closes the listener, awaits it and removes what Arm created
// (the stdio server's directory).
func (a *armed) Release() error {
	err := a.release()
	a.log.Debug("result server released", "at", a.where)
	return err
}

// keep keeps one call's report while a turn asks for the result, and
// says whether one did; while none does it keeps nothing.
func (a *armed) keep(r report) bool {
	a.mu.Lock()
	asks := a.asks
	switch {
	case !asks:
	case r.Invalid != "":
		a.invalid = r.Invalid
	default:
		a.result = r.Result
	}
	a.mu.Unlock()
	if !asks {
		a.log.Debug("result submitted in a turn that does not ask for it; not kept")
		return false
	}
	a.log.Debug("result submitted")
	return true
}

// report keeps the one report a connection delivers, and acknowledges it;
// while no turn asks for the result it keeps nothing and answers so.
func (a *armed) report(line []byte, conn net.Conn) {
	var r report
	if err := json.Unmarshal(line, &r); err != nil {
		a.log.Debug("result report did not decode", "error", err)
		return
	}
	if !a.keep(r) {
		_, _ = conn.Write([]byte(notAsked))
		return
	}
	_, _ = conn.Write([]byte(ack))
}

// report is the line the server writes for a call: a valid result, or
// the validation errors of an invalid one.
type report struct {
	Token   string          `json:"token"`
	Result  json.RawMessage `json:"result,omitempty"`
	Invalid string          `json:"invalid,omitempty"`
}
