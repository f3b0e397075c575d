package mcpbeacon

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"

	"github.com/acpdrive/acpdrive/adapters/internal/logs"
	"github.com/acpdrive/acpdrive/adapters/internal/reportsock"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// The variables the declared server's env carries.
const (
	// EnvSocket is the path of the armed session's unix socket.
	EnvSocket = "ACPDRIVE_BEACON_SOCKET"
	// EnvToken is the armed session's token, 64 hex digits.
	EnvToken = "ACPDRIVE_BEACON_TOKEN"
)

// SubcommandName is the CLI's hidden subcommand that runs Main.
const SubcommandName = "mcp-beacon"

// maxReportBytes bounds the one line a beacon writes.
const maxReportBytes = 4096

// ErrNoCommand is returned by Arm when Options.Command is empty.
var ErrNoCommand = errors.New("the tool-server beacon has no command to re-execute")

// Options configures a Beacon.
type Options struct {
	// Command is the beacon's command line: an executable that runs Main
	// (or Serve) on its standard streams, and its arguments. The CLI uses
	// its own executable and SubcommandName.
	Command []string
	// Dir is where the per-session directories are made; "" means
	// os.TempDir(). The socket path must stay under 100 bytes.
	Dir string
	// Logger receives a debug record per beacon armed, reported and
	// released; nil discards. A token is never logged.
	Logger *slog.Logger
}

// Beacon implements ports.ToolServerBeacon. It holds no state between
// calls and is safe for concurrent use.
type Beacon struct {
	opts Options
	log  *slog.Logger
}

var _ ports.ToolServerBeacon = (*Beacon)(nil)

// New returns a Beacon.
func New(opts Options) *Beacon {
	return &Beacon{opts: opts, log: logs.OrDiscard(opts.Logger)}
}

// Arm creates the session's directory, socket and token, and starts
// watching the socket. The caller must Release the result.
func (b *Beacon) Arm(ctx context.Context) (ports.ArmedBeacon, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(b.opts.Command) == 0 || b.opts.Command[0] == "" {
		return nil, ErrNoCommand
	}
	a := &armed{log: b.log, initialized: make(chan struct{})}
	l, err := reportsock.Listen(b.opts.Dir, "acpdrive-beacon-", "beacon", maxReportBytes, b.log, a.report)
	if err != nil {
		return nil, err
	}
	a.sock = l
	a.server = domain.MCPServer{
		Name:      domain.BeaconServerName,
		Transport: domain.MCPStdio,
		Command:   b.opts.Command[0],
		Args:      append([]string{}, b.opts.Command[1:]...),
		Env:       []domain.NameValue{{Name: EnvSocket, Value: l.Path()}, {Name: EnvToken, Value: l.Token()}},
	}
	b.log.Debug("tool-server beacon armed", "socket", l.Path())
	return a, nil
}

// armed is one session's beacon.
type armed struct {
	log    *slog.Logger
	sock   *reportsock.Listener
	server domain.MCPServer

	initialized chan struct{}
	once        sync.Once
	client      atomic.Pointer[string] // the MCP client's name, once reported
}

func (a *armed) Server() domain.MCPServer {
	s := a.server
	s.Args = append([]string{}, s.Args...)
	s.Env = append([]domain.NameValue{}, s.Env...)
	return s
}

func (a *armed) Initialized() <-chan struct{} { return a.initialized }

func (a *armed) MCPClient() string {
	if name := a.client.Load(); name != nil {
		return *name
	}
	return ""
}

// Release closes the socket, awaits the watcher and removes the directory.
func (a *armed) Release() error {
	err := a.sock.Close()
	a.log.Debug("tool-server beacon released", "socket", a.sock.Path())
	return err
}

// report reads the one report a beacon sends once initialize completed.
func (a *armed) report(line []byte, _ net.Conn) {
	var r report
	if err := json.Unmarshal(line, &r); err != nil {
		a.log.Debug("tool-server beacon report did not decode", "error", err)
		return
	}
	a.once.Do(func() {
		a.client.Store(&r.MCPClient)
		close(a.initialized)
		a.log.Debug("tool-server beacon initialized", "mcp_client", r.MCPClient)
	})
}

// report is the line a beacon writes once initialize completed.
type report struct {
	Token     string `json:"token"`
	MCPClient string `json:"mcp_client,omitempty"`
}
