package netdial

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/acpdrive/acpdrive/adapters/internal/netwire"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// Defaults of Options.
const (
	// DefaultConnectTimeout bounds the connection and the token exchange.
	DefaultConnectTimeout = 10 * time.Second
	// keepAlive is the TCP keep-alive period, so a peer that vanished
	// without a word is noticed by the read side.
	keepAlive = 15 * time.Second
)

// Contract messages (docs/behaviour.md#network).
const (
	// MsgConnectFailed starts the message of a connection that could not
	// be made.
	MsgConnectFailed = "could not connect to the runtime's address"
	// MsgTokenUnset starts the message of a token variable that is unset
	// or empty; the variable's name follows.
	MsgTokenUnset = "the bearer token's variable is unset or empty"
	// MsgTokenRefused starts the message of a token the server refused;
	// " held in VAR" and the server's answer follow.
	MsgTokenRefused = "the server refused the bearer token"
	// MsgTokenNeeded is the message of a server that wants a token when
	// none was given.
	MsgTokenNeeded = "the server requires a bearer token; none was given (--token-env VAR)"
	// MsgNoSandbox refuses a sandbox: a runtime at a URL is confined, or
	// not, where it runs.
	MsgNoSandbox = "a runtime at a URL cannot be sandboxed from here: confine it where it is served (acpdrive serve --sandbox is not offered either)"
)

// Options configure a Launcher.
type Options struct {
	// URL is the runtime's address: tcp://HOST:PORT, unix:PATH, ws://…,
	// wss://…, http://… or https://… (Streamable HTTP).
	URL string
	// TokenEnv names the environment variable holding the bearer token;
	// "" sends none. The variable is read at each connection.
	TokenEnv string
	// CAFile is a PEM file of the certificate authorities a wss:// server
	// is checked against; "" uses the system's roots.
	CAFile string
	// ConnectTimeout bounds the connection, the WebSocket handshake and
	// the token exchange; zero means DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// Logger receives the transport's logs; nil discards them.
	Logger *slog.Logger
	// Getenv reads the token's variable; nil means os.Getenv.
	Getenv func(string) string
	// Resume, when set, makes every start a resume of the WebSocket
	// connection it names instead of a new connection: the upgrade names
	// the connection and its first frame is stream/resume after
	// Resume.Cursor, so the server sends the messages after it again,
	// then the live ones (docs/behaviour.md#held-sessions). A server that
	// refuses fails the start (port_exit, MsgResumeFailed).
	Resume *Resume
}

// Resume names a WebSocket connection to resume and the cursor to resume
// after ("" for the first message the server still holds).
type Resume struct {
	// Connection is the connection's id (Acp-Connection-Id).
	Connection string
	// Cursor is the last cursor received; "" asks for every held message.
	Cursor string
}

// Launcher connects to a runtime at a URL. It implements ports.Launcher
// and is safe for concurrent use; each Plan's start is a new connection.
type Launcher struct {
	opts Options
	addr netwire.Address
	tls  *tls.Config
}

var _ ports.Launcher = (*Launcher)(nil)

// New checks o and returns its Launcher. The error (a
// *domain.AgentError of kind agent_not_found, reason
// configuration_invalid) names what is wrong with the URL or the CA file.
func New(o Options) (*Launcher, error) {
	addr, err := netwire.Parse(o.URL)
	if err != nil {
		return nil, configError(err.Error())
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	l := &Launcher{opts: o, addr: addr}
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, configError(fmt.Sprintf("CA file: %v", err))
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, configError("CA file " + o.CAFile + " holds no PEM certificate")
		}
		l.tls = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return l, nil
}

func configError(msg string) error {
	return domain.NewError(domain.KindAgentNotFound, msg).WithReason(domain.ReasonConfigurationInvalid)
}

// URL is the address the launcher dials.
func (l *Launcher) URL() string { return l.addr.URL }

// NeedsNoCommand reports that the launcher runs no command: a session's
// Settings.Command may be left empty (docs/behaviour.md#network).
func (l *Launcher) NeedsNoCommand() bool { return true }

// Prepare returns a plan connecting to the URL. The workspace is the
// serving machine's, so it is not checked here (only that it is an absolute path);
// req.Command is not run. A sandbox is refused (agent_not_found,
// not_offered): nothing here can confine a runtime elsewhere.
func (l *Launcher) Prepare(req ports.LaunchRequest) (ports.Plan, error) {
	if err := domain.CheckRemoteWorkspacePath(req.Workspace); err != nil {
		return nil, err
	}
	if req.Sandbox.Enabled {
		return nil, domain.NewError(domain.KindAgentNotFound, MsgNoSandbox).WithReason(domain.ReasonNotOffered)
	}
	return &plan{l: l}, nil
}

// plan is one prepared connection.
type plan struct{ l *Launcher }

// Target is the URL's host (the socket path for unix:): a remote runtime.
func (p *plan) Target() ports.Target { return ports.Target{Host: p.l.addr.URL} }

// Start connects, within ctx and the connect timeout, and exchanges the
// token. env is not sent: the runtime's environment is the server's.
// Errors are *domain.AgentError values of kind port_exit (turn_cancelled
// when ctx ended); a token that is unset, missing or refused names its
// variable (MsgTokenUnset, MsgTokenNeeded, MsgTokenRefused).
func (p *plan) Start(ctx context.Context, _ []string) (ports.Process, error) {
	l := p.l
	token := ""
	if l.opts.TokenEnv != "" {
		token = l.opts.Getenv(l.opts.TokenEnv)
		if token == "" {
			return nil, domain.NewError(domain.KindPortExit, MsgTokenUnset+": "+l.opts.TokenEnv)
		}
	}
	cctx, cancel := context.WithTimeout(ctx, l.opts.ConnectTimeout)
	defer cancel()
	var proc *process
	var err error
	switch {
	case l.addr.Stream():
		proc, err = dialStream(cctx, l, token)
	case l.addr.Scheme == netwire.SchemeHTTP || l.addr.Scheme == netwire.SchemeHTTPS:
		proc = dialHTTP(l, token).p // connects with its first message
	default:
		proc, err = dialWebSocket(cctx, l, token)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, domain.WrapError(domain.KindTurnCancelled, "the connection was cancelled", ctx.Err())
		}
		return nil, err
	}
	l.opts.Logger.Debug("runtime connection opened", "url", l.addr.URL)
	return proc, nil
}

// tokenRefused is the error of a refused token; how names the server's
// answer ("HTTP 401").
func (l *Launcher) tokenRefused(how string) error {
	if l.opts.TokenEnv == "" {
		return domain.NewError(domain.KindPortExit, MsgTokenNeeded+" ("+how+")")
	}
	return domain.NewError(domain.KindPortExit, MsgTokenRefused+" held in "+l.opts.TokenEnv+" ("+how+")")
}
