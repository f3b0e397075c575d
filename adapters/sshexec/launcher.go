package sshexec

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/acpdrive/acpdrive/adapters/internal/logs"
	"github.com/acpdrive/acpdrive/adapters/sshexec/internal/preamblecut"
	"github.com/acpdrive/acpdrive/adapters/sshexec/internal/remotecmd"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// MsgSSHNotFound is the agent_not_found message of a missing local ssh.
const MsgSSHNotFound = "ssh binary not found on orchestrator host"

// Fixed ssh options of docs/behaviour.md#ssh (StrictHostKeyChecking comes
// first and is configured).
var fixedOptions = []string{
	"-o", "BatchMode=yes",
	"-o", "ConnectTimeout=30",
	"-o", "ServerAliveInterval=15",
	"-o", "ServerAliveCountMax=3",
}

// Options configures a Launcher.
type Options struct {
	// Host is the destination: "[user@]host[:port]" or a client-config
	// alias. Required.
	Host string
	// SSHPath is the local ssh binary; "" means the PATH lookup of "ssh".
	SSHPath string
	// StrictHostKeyChecking is worker.ssh_strict_host_key_checking:
	// accept-new (the default when ""), yes or no. Another value warns
	// once and accept-new is used.
	StrictHostKeyChecking string
	// ConfigFile is worker.ssh_config: an alternate client config passed
	// as -F. "" reads the user's own OpenSSH configuration.
	ConfigFile string
	// PassEnv is worker.ssh_pass_env: names of local variables whose
	// values are sent to the remote environment in the stdin preamble.
	PassEnv []string
	// LookupEnv reads a local variable; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Logger receives diagnostics; nil discards them. No value of PassEnv
	// is ever logged.
	Logger *slog.Logger
}

// Launcher starts the runtime on one remote host through the local ssh
// binary. It implements ports.Launcher and is safe for concurrent use.
type Launcher struct {
	opts   Options
	logger *slog.Logger
	strict string

	warnOnce sync.Once

	// preambleCut, set by tests only, drops that many bytes from the end
	// of the preamble and closes stdin, to prove a truncated preamble
	// fails the launch; later writes are discarded (preamblecut.Process).
	preambleCut int
}

var _ ports.Launcher = (*Launcher)(nil)

// New returns a Launcher for opts.Host.
func New(opts Options) *Launcher {
	l := &Launcher{opts: opts, logger: logs.OrDiscard(opts.Logger)}
	if l.opts.LookupEnv == nil {
		l.opts.LookupEnv = os.LookupEnv
	}
	switch opts.StrictHostKeyChecking {
	case "":
		l.strict = domain.StrictHostKeyAcceptNew
	case domain.StrictHostKeyAcceptNew, domain.StrictHostKeyYes, domain.StrictHostKeyNo:
		l.strict = opts.StrictHostKeyChecking
	default:
		l.strict = domain.StrictHostKeyAcceptNew
	}
	return l
}

// Host returns the destination this launcher connects to.
func (l *Launcher) Host() string { return l.opts.Host }

// Prepare checks the workspace as a remote path (non-empty, valid UTF-8,
// POSIX-absolute; domain.CheckRemoteWorkspacePath), resolves the local ssh
// binary and builds the remote command. Whether the directory exists is
// checked on the remote host (the remote cd fails the launch with the
// shell's message and exit status 1).
//
// Errors are *domain.AgentError values: agent_not_found when ssh cannot be
// found or the command is empty; invalid_workspace_cwd for a workspace
// path that is empty, not UTF-8 or relative.
func (l *Launcher) Prepare(req ports.LaunchRequest) (ports.Plan, error) {
	if l.opts.StrictHostKeyChecking != l.strict && l.opts.StrictHostKeyChecking != "" {
		l.warnOnce.Do(func() {
			l.logger.Warn("worker.ssh_strict_host_key_checking is not one of accept-new, yes, no; using accept-new",
				slog.String("value", l.opts.StrictHostKeyChecking))
		})
	}
	if err := domain.CheckRemoteWorkspacePath(req.Workspace); err != nil {
		return nil, err
	}
	if len(req.Command) == 0 || strings.TrimSpace(req.Command[0]) == "" {
		return nil, domain.NewError(domain.KindAgentNotFound, domain.MsgEmptyCommand).WithReason(domain.ReasonConfigurationInvalid)
	}
	if l.opts.Host == "" {
		return nil, domain.NewError(domain.KindAgentNotFound, "no SSH host configured").WithReason(domain.ReasonConfigurationInvalid)
	}
	sshPath, err := l.resolveSSH()
	if err != nil {
		return nil, err
	}
	return &plan{l: l, sshPath: sshPath, command: remotecmd.JoinFragment(req.Command), workspace: req.Workspace,
		sandbox: remotecmd.SandboxFor(req.Sandbox, req.AddDirs, req.Command)}, nil
}

func (l *Launcher) resolveSSH() (string, error) {
	name := l.opts.SSHPath
	if name == "" {
		name = "ssh"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return "", domain.WrapError(domain.KindAgentNotFound, MsgSSHNotFound, err).WithReason(domain.ReasonProgramMissing)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", domain.WrapError(domain.KindAgentNotFound, MsgSSHNotFound, err).WithReason(domain.ReasonProgramMissing)
	}
	return abs, nil
}

// plan is a prepared remote launch.
type plan struct {
	l         *Launcher
	sshPath   string
	command   string   // agent.command's first word: the whole shell fragment
	args      []string // words acpdrive added
	workspace string
	sandbox   *remotecmd.RemoteSandbox // nil: unconfined (docs/behaviour.md#sandbox)
}

var _ ports.Plan = (*plan)(nil)

// Target names the remote host.
func (p *plan) Target() ports.Target { return ports.Target{Host: p.l.opts.Host} }

// Argv returns the ssh argument list (without the program) and the
// preamble for this launch. The preamble is nil without PassEnv.
func (p *plan) argv() ([]string, []byte) {
	var pre []byte
	spec := remotecmd.RemoteSpec{Command: p.command, Args: p.args, Workspace: p.workspace, Sandbox: p.sandbox}
	if len(p.l.opts.PassEnv) > 0 {
		pre = remotecmd.Preamble(remotecmd.PassEnvValues(p.l.opts.PassEnv, p.l.opts.LookupEnv))
		spec.PassEnv = p.l.opts.PassEnv
		spec.PreambleLen = len(pre)
	}
	return p.l.sshArgs(remotecmd.MarkedCommand(spec)), pre
}

// sshArgs returns the ssh argument list (without the program) that runs
// command on the host: the launch's, and the force step's second
// connection (process.killRemote).
func (l *Launcher) sshArgs(command string) []string {
	var argv []string
	if l.opts.ConfigFile != "" {
		argv = append(argv, "-F", l.opts.ConfigFile)
	}
	argv = append(argv, "-o", "StrictHostKeyChecking="+l.strict)
	argv = append(argv, fixedOptions...)
	return append(argv, "--", destination(l.opts.Host), command)
}

// Start runs ssh in a local process group of its own and writes the
// preamble before returning. env is not sent to the remote host (a
// remote launch carries no configured environment beyond ssh_pass_env);
// it is given to the local ssh.
func (p *plan) Start(ctx context.Context, env []string) (ports.Process, error) {
	if err := ctx.Err(); err != nil {
		return nil, domain.WrapError(domain.KindTurnCancelled, "session start cancelled", err)
	}
	argv, pre := p.argv()
	p.l.logger.Debug("starting ssh", slog.String("host", p.l.opts.Host), slog.String("ssh", p.sshPath),
		slog.Int("pass_env_names", len(p.l.opts.PassEnv)))
	proc, err := startSSH(p.l, p.sshPath, argv, env)
	if err != nil {
		return nil, err
	}
	if pre != nil {
		cut := pre
		if p.l.preambleCut > 0 && p.l.preambleCut <= len(pre) {
			cut = pre[:len(pre)-p.l.preambleCut]
		}
		if _, err := proc.Stdin().Write(cut); err != nil {
			_ = proc.Kill()
			_ = proc.Release()
			return nil, domain.WrapError(domain.KindPortExit, "failed to write the ssh_pass_env preamble", err)
		}
		if len(cut) != len(pre) {
			_ = proc.Stdin().Close()
			return preamblecut.Process{Process: proc}, nil
		}
	}
	return proc, nil
}

// String describes the launcher without any value.
func (l *Launcher) String() string { return fmt.Sprintf("sshexec(%s)", l.opts.Host) }

// destination turns "[user@]host:port" into the ssh:// form ssh parses
// (ssh itself reads "host:port" as a host name); an alias, a bare host or
// an IPv6 address is passed as written.
func destination(host string) string {
	if strings.Count(host, ":") == 1 && !strings.HasPrefix(host, "ssh://") {
		return "ssh://" + host
	}
	return host
}
