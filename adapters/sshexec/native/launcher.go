package native

import (
	"context"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/acpdrive/acpdrive/adapters/internal/logs"
	"github.com/acpdrive/acpdrive/adapters/sshexec/internal/preamblecut"
	"github.com/acpdrive/acpdrive/adapters/sshexec/internal/remotecmd"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// NoAgent as Options.AgentSocket offers no ssh-agent keys even when
// SSH_AUTH_SOCK is set.
const NoAgent = "none"

// Messages of Start errors (all of kind port_exit).
const (
	// MsgConnectFailed is the message of a Start that could not connect;
	// the cause is a *DialError. It is the ssh binary's exit-255 message.
	MsgConnectFailed = "ssh connection failed"
	// msgSessionFailed is the message when the connection is up but the
	// session channel or its exec request failed.
	msgSessionFailed  = "failed to start the remote command"
	msgStartCancelled = "session start cancelled"
	msgPreambleFailed = "failed to send the ssh_pass_env preamble"
)

// Options configures a Launcher.
type Options struct {
	// Host is "[user@]host[:port]" or a Host alias of the client
	// configuration. Required.
	Host string
	// ConfigFile is the ssh client configuration (like ssh -F). Empty
	// reads ~/.ssh/config and then /etc/ssh/ssh_config, as ssh does.
	ConfigFile string
	// StrictHostKeyChecking is accept-new, yes or no
	// (worker.ssh_strict_host_key_checking). Like ssh's -o it overrides the
	// client configuration; empty takes the configuration's value, else
	// accept-new. Any other value means accept-new.
	StrictHostKeyChecking string
	// KnownHostsFile overrides the configuration's UserKnownHostsFile
	// (default ~/.ssh/known_hosts). accept-new adds new keys to it.
	KnownHostsFile string
	// PassEnv names the variables (worker.ssh_pass_env) whose values this
	// process sends in the preamble. Values are looked up at each Start.
	PassEnv []string
	// Logger receives the adapter's diagnostics. Nil discards them.
	Logger *slog.Logger
	// Dial makes the TCP connection. Nil uses a net.Dialer. Tests count
	// handshakes or cut connections with it.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// AgentSocket is the ssh-agent's socket. Empty means $SSH_AUTH_SOCK;
	// NoAgent uses no agent.
	AgentSocket string
	// LookupEnv looks ssh_pass_env values up. Nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
}

// Launcher starts the runtime on one remote host over a native SSH
// connection: every session is a channel of one shared connection. It
// implements ports.Launcher and is safe for concurrent use.
type Launcher struct {
	opts      Options
	host      string
	logger    *slog.Logger
	dialer    func(ctx context.Context, network, addr string) (net.Conn, error)
	lookupEnv func(string) (string, bool)
	home      string
	localUser string

	mu   sync.Mutex
	conn *sharedConn // the live (or dialling) connection, nil when none

	handshakes atomic.Int64

	// preambleCut, set by tests only, sends the preamble this many bytes
	// short and then closes stdin; later writes are discarded
	// (preamblecut.Process).
	preambleCut int
}

var _ ports.Launcher = (*Launcher)(nil)

// New returns a Launcher for opts.Host. Nothing is dialled before the
// first Start.
func New(opts Options) *Launcher {
	l := &Launcher{opts: opts, host: opts.Host, dialer: opts.Dial, lookupEnv: opts.LookupEnv}
	l.logger = logs.OrDiscard(opts.Logger).With(slog.String("component", "ssh_native"))
	if l.dialer == nil {
		d := &net.Dialer{}
		l.dialer = d.DialContext
	}
	if l.lookupEnv == nil {
		l.lookupEnv = os.LookupEnv
	}
	l.home, l.localUser = localIdentity()
	return l
}

// Handshakes reports how many SSH connections this launcher has
// established (each is one handshake).
func (l *Launcher) Handshakes() int64 { return l.handshakes.Load() }

// Prepare validates req; it dials nothing and needs no local binary. The
// workspace must be a non-empty, valid UTF-8, absolute path (whether it
// exists is up to the remote host: cd fails there with the remote shell's
// message and exit status 1); domain.CheckRemoteWorkspacePath checks it.
// Errors are *domain.AgentError values:
// invalid_workspace_cwd, agent_not_found for an empty command.
func (l *Launcher) Prepare(req ports.LaunchRequest) (ports.Plan, error) {
	if err := domain.CheckRemoteWorkspacePath(req.Workspace); err != nil {
		return nil, err
	}
	if len(req.Command) == 0 || strings.TrimSpace(req.Command[0]) == "" {
		return nil, domain.NewError(domain.KindAgentNotFound, domain.MsgEmptyCommand).WithReason(domain.ReasonConfigurationInvalid)
	}
	// The whole command is agent.command's shell fragment, re-joined the
	// way the ssh-binary transport joins it (remotecmd.JoinFragment), so
	// both transports run the same remote command.
	return &plan{l: l, command: remotecmd.JoinFragment(req.Command), workspace: req.Workspace,
		sandbox: remotecmd.SandboxFor(req.Sandbox, req.AddDirs, req.Command)}, nil
}

// plan is a validated remote launch. It implements ports.Plan.
type plan struct {
	l         *Launcher
	command   string   // agent.command, a shell fragment
	args      []string // the words acpdrive added, quoted remotely
	workspace string
	sandbox   *remotecmd.RemoteSandbox // nil: unconfined (docs/behaviour.md#sandbox)
}

var _ ports.Plan = (*plan)(nil)

// Target names the remote host.
func (p *plan) Target() ports.Target { return ports.Target{Host: p.l.host} }

// Start opens a session channel on the host's shared connection (dialling
// it first when there is none), runs remotecmd.RemoteCommand as its exec
// request and writes the ssh_pass_env preamble before any protocol byte.
// env is not delivered: nothing of this process's environment reaches the
// remote host beyond ssh_pass_env (docs/behaviour.md#ssh).
//
// Errors are *domain.AgentError values: turn_cancelled when ctx is done
// before or during the start; port_exit with MsgConnectFailed and a
// *DialError cause when no connection could be made (Unreachable tells a
// host that could not be reached at all), port_exit otherwise.
func (p *plan) Start(ctx context.Context, env []string) (ports.Process, error) {
	if err := ctx.Err(); err != nil {
		return nil, domain.WrapError(domain.KindTurnCancelled, msgStartCancelled, err)
	}
	if len(env) > 0 {
		p.l.logger.Debug("environment additions are not delivered to a remote runtime", slog.Int("count", len(env)))
	}
	c, err := p.l.acquire(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, domain.WrapError(domain.KindTurnCancelled, msgStartCancelled, err)
		}
		return nil, domain.WrapError(domain.KindPortExit, MsgConnectFailed, err)
	}
	var pre []byte
	if len(p.l.opts.PassEnv) > 0 {
		pre = remotecmd.Preamble(remotecmd.PassEnvValues(p.l.opts.PassEnv, p.l.lookupEnv))
	}
	spec := remotecmd.RemoteSpec{Command: p.command, Args: p.args, Workspace: p.workspace, Sandbox: p.sandbox, PassEnv: p.l.opts.PassEnv, PreambleLen: len(pre)}
	send := pre
	if cut := p.l.preambleCut; cut > 0 && cut <= len(pre) {
		send = pre[:len(pre)-cut]
	}
	proc, err := startSession(ctx, p.l, c, remotecmd.MarkedCommand(spec), send)
	if err != nil {
		_ = c.release()
		if ctx.Err() != nil {
			return nil, domain.WrapError(domain.KindTurnCancelled, msgStartCancelled, err)
		}
		return nil, err
	}
	if len(send) < len(pre) {
		_ = proc.stdin.Close()
		return preamblecut.Process{Process: proc}, nil
	}
	return proc, nil
}
