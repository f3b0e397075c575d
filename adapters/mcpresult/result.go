package mcpresult

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/adapters/internal/logs"
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

// readBound bounds how long an accepted connection may take to deliver
// its line.
const readBound = 5 * time.Second

// maxSocketPath is the longest unix socket path accepted.
const maxSocketPath = 100

// ack is the client's answer to a report it kept.
const ack = "ok\n"

// ErrNoCommand is returned by Arm when Options.Command is empty.
var ErrNoCommand = errors.New("the result server has no command to re-execute")

// Options configures a Server.
type Options struct {
	// Command is the server's command line: an executable that runs Main
	// on its standard streams, and its arguments. The CLI uses its own
	// executable and SubcommandName.
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

// Arm creates the session's directory, schema file, socket and token, and
// starts listening. The caller must Release the result.
func (s *Server) Arm(ctx context.Context, schema json.RawMessage) (ports.ArmedResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(s.opts.Command) == 0 || s.opts.Command[0] == "" {
		return nil, ErrNoCommand
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("result server token: %w", err)
	}
	dir, err := os.MkdirTemp(s.opts.Dir, "acpdrive-result-")
	if err != nil {
		return nil, fmt.Errorf("result server directory: %w", err)
	}
	schemaPath := filepath.Join(dir, "schema.json")
	if err := os.WriteFile(schemaPath, schema, 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("result server schema: %w", err)
	}
	path := filepath.Join(dir, "s")
	if len(path) > maxSocketPath {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("result server socket path %q is longer than %d bytes: set a shorter temporary directory", path, maxSocketPath)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("result server socket: %w", err)
	}
	a := &armed{log: s.log, dir: dir, path: path, token: hex.EncodeToString(raw), ln: ln, done: make(chan struct{})}
	a.server = domain.MCPServer{
		Name:      domain.ResultServerName,
		Transport: domain.MCPStdio,
		Command:   s.opts.Command[0],
		Args:      append([]string{}, s.opts.Command[1:]...),
		Env: []domain.NameValue{
			{Name: EnvSocket, Value: path}, {Name: EnvToken, Value: a.token}, {Name: EnvSchema, Value: schemaPath},
		},
	}
	go a.accept()
	s.log.Debug("result server armed", "socket", path)
	return a, nil
}

// armed is one session's result server.
type armed struct {
	log    *slog.Logger
	dir    string
	path   string
	token  string
	ln     net.Listener
	server domain.MCPServer

	mu       sync.Mutex // guards result, conn and released
	result   json.RawMessage
	invalid  string
	conn     net.Conn
	released bool

	release sync.Once
	err     error
	done    chan struct{} // closed when accept returned
}

func (a *armed) Server() domain.MCPServer {
	s := a.server
	s.Args = append([]string{}, s.Args...)
	s.Env = append([]domain.NameValue{}, s.Env...)
	return s
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

// Release closes the socket, awaits the listener and removes the
// directory.
func (a *armed) Release() error {
	a.release.Do(func() {
		err := a.ln.Close()
		a.mu.Lock()
		a.released = true
		if a.conn != nil {
			_ = a.conn.Close()
		}
		a.mu.Unlock()
		<-a.done
		if errors.Is(err, net.ErrClosed) {
			err = nil
		}
		a.err = errors.Join(err, os.RemoveAll(a.dir))
		a.log.Debug("result server released", "socket", a.path)
	})
	return a.err
}

func (a *armed) accept() {
	defer close(a.done)
	for {
		conn, err := a.ln.Accept()
		if err != nil {
			return
		}
		a.read(conn)
	}
}

// read keeps the one report a connection delivers, and acknowledges it.
func (a *armed) read(conn net.Conn) {
	defer conn.Close()
	a.mu.Lock()
	if a.released {
		a.mu.Unlock()
		return
	}
	a.conn = conn
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.conn = nil
		a.mu.Unlock()
	}()
	_ = conn.SetDeadline(time.Now().Add(readBound))
	sc := bufio.NewScanner(conn)
	sc.Buffer(make([]byte, 0, 4096), maxReportBytes)
	if !sc.Scan() {
		return
	}
	var r report
	if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
		a.log.Debug("result report did not decode", "error", err)
		return
	}
	if subtle.ConstantTimeCompare([]byte(r.Token), []byte(a.token)) != 1 {
		a.log.Debug("result report carried another token")
		return
	}
	a.mu.Lock()
	if r.Invalid != "" {
		a.invalid = r.Invalid
	} else {
		a.result = r.Result
	}
	a.mu.Unlock()
	_, _ = conn.Write([]byte(ack))
	a.log.Debug("result submitted")
}

// report is the line the server writes for a call: a valid result, or
// the validation errors of an invalid one.
type report struct {
	Token   string          `json:"token"`
	Result  json.RawMessage `json:"result,omitempty"`
	Invalid string          `json:"invalid,omitempty"`
}
