package mcpbeacon

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
	"sync/atomic"
	"time"

	"github.com/acpdrive/acpdrive/adapters/internal/logs"
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

// reportReadBound bounds how long an accepted connection may take to
// deliver its line.
const reportReadBound = 5 * time.Second

// maxSocketPath is the longest unix socket path accepted (sun_path is 108
// bytes on Linux, 104 on macOS and the BSDs).
const maxSocketPath = 100

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
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("beacon token: %w", err)
	}
	dir, err := os.MkdirTemp(b.opts.Dir, "acpdrive-beacon-")
	if err != nil {
		return nil, fmt.Errorf("beacon directory: %w", err)
	}
	path := filepath.Join(dir, "s")
	if len(path) > maxSocketPath {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("beacon socket path %q is longer than %d bytes: set a shorter temporary directory", path, maxSocketPath)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("beacon socket: %w", err)
	}
	a := &armed{
		log:         b.log,
		dir:         dir,
		path:        path,
		token:       hex.EncodeToString(raw),
		ln:          ln,
		initialized: make(chan struct{}),
		done:        make(chan struct{}),
	}
	a.server = domain.MCPServer{
		Name:      domain.BeaconServerName,
		Transport: domain.MCPStdio,
		Command:   b.opts.Command[0],
		Args:      append([]string{}, b.opts.Command[1:]...),
		Env:       []domain.NameValue{{Name: EnvSocket, Value: path}, {Name: EnvToken, Value: a.token}},
	}
	go a.accept()
	b.log.Debug("tool-server beacon armed", "socket", path)
	return a, nil
}

// armed is one session's beacon.
type armed struct {
	log    *slog.Logger
	dir    string
	path   string
	token  string
	ln     net.Listener
	server domain.MCPServer

	initialized chan struct{}
	once        sync.Once
	client      atomic.Pointer[string] // the MCP client's name, once reported
	mu          sync.Mutex             // guards conn and released
	conn        net.Conn               // the connection being read, closed by Release
	released    bool

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

func (a *armed) Initialized() <-chan struct{} { return a.initialized }

func (a *armed) MCPClient() string {
	if name := a.client.Load(); name != nil {
		return *name
	}
	return ""
}

// Release closes the socket, awaits the watcher and removes the directory.
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
		a.err = errors.Join(ignoreClosed(err), os.RemoveAll(a.dir))
		a.log.Debug("tool-server beacon released", "socket", a.path)
	})
	return a.err
}

// accept serves the socket until it is closed: each connection delivers
// at most one report line, read within reportReadBound.
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
	_ = conn.SetReadDeadline(time.Now().Add(reportReadBound))
	sc := bufio.NewScanner(conn)
	sc.Buffer(make([]byte, 0, 512), maxReportBytes)
	if !sc.Scan() {
		return
	}
	var r report
	if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
		a.log.Debug("tool-server beacon report did not decode", "error", err)
		return
	}
	if subtle.ConstantTimeCompare([]byte(r.Token), []byte(a.token)) != 1 {
		a.log.Debug("tool-server beacon report carried another token")
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

func ignoreClosed(err error) error {
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}
