// Package inprocess is a ports.Launcher that serves acpdrive's reference
// agent (refagent.Serve) inside the calling process over os.Pipe pairs: a
// runtime to try the library with (app.Start's example), to embed in an
// orchestrator's own tests, and the peer of acpdrive's tests of its
// protocol behaviour, with no subprocess and nothing to install.
//
// The pipes are real *os.File pipes, so write deadlines and closes behave as
// with a local process. What cannot behave the same is documented on each
// method: there is no process ID, the workspace is not the agent's working
// directory, the environment is not passed, and scripts that spawn
// descendants are refused by the agent (refagent.Serve).
package inprocess

import (
	"context"

	"github.com/acpdrive/acpdrive/adapters/internal/procio"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// Launcher runs the reference agent in-process. It implements
// ports.Launcher and is safe for concurrent use.
type Launcher struct {
	args []string
}

var _ ports.Launcher = (*Launcher)(nil)

// MsgNoSandbox refuses a request for a sandbox: an in-process agent
// cannot be confined.
const MsgNoSandbox = "the in-process launcher cannot run the agent in a sandbox: use a local or SSH launcher"

// New returns a Launcher whose agents run with args: the reference agent's
// flags, e.g. "--scenario", "close", "--log", file.
func New(args ...string) *Launcher {
	return &Launcher{args: append([]string(nil), args...)}
}

// Prepare validates req.Workspace as a local launcher does (non-empty,
// valid UTF-8, absolute, an existing directory) and returns a Plan running the agent on
// this machine. Errors are *domain.AgentError values of kind
// invalid_workspace_cwd, or agent_not_found when req asks for a sandbox:
// nothing runs in another process here, so nothing can be confined, and
// the agent is never served unconfined instead (docs/behaviour.md#sandbox).
//
// req.Command is ignored: the program is always the reference agent with
// the Launcher's arguments, so a command naming no installed program is
// never agent_not_found here.
func (l *Launcher) Prepare(req ports.LaunchRequest) (ports.Plan, error) {
	if err := procio.CheckLocalWorkspace(req.Workspace); err != nil {
		return nil, err
	}
	if req.Sandbox.Enabled {
		return nil, domain.NewError(domain.KindAgentNotFound, MsgNoSandbox).WithReason(domain.ReasonNotOffered)
	}
	return &plan{args: l.args, workspace: req.Workspace}, nil
}

// NeedsNoCommand reports that the launcher needs no command: the program
// is always the reference agent, so a session's Settings.Command may be
// left empty (app.Start then hands the launcher the empty command).
func (l *Launcher) NeedsNoCommand() bool { return true }

// plan is a validated in-process launch; it may be started any number of
// times, each start a fresh agent.
type plan struct {
	args      []string
	workspace string
}

// Target is this machine.
func (p *plan) Target() ports.Target { return ports.Target{} }

// Start serves a fresh reference agent on new pipes.
//
// env is ignored: the agent reads no environment, and an in-process agent
// shares the test process's. The workspace is not made the agent's working
// directory either (that is per process); the agent learns it only from
// session/new, and a relative --log path is resolved against the test
// process's directory.
//
// A ctx already done returns a *domain.AgentError of kind turn_cancelled;
// a pipe that cannot be made, one of kind port_exit.
func (p *plan) Start(ctx context.Context, env []string) (ports.Process, error) {
	if err := ctx.Err(); err != nil {
		return nil, domain.WrapError(domain.KindTurnCancelled, domain.MsgTurnCancelled, err)
	}
	return start(p.args)
}
