package ports

import (
	"context"
	"io"

	"github.com/acpdrive/acpdrive/domain"
)

// LaunchRequest describes the runtime to run.
type LaunchRequest struct {
	// Command is the runtime's command line split into words; Command[0]
	// names the program. A local launcher resolves it from PATH; a remote
	// one runs it on the remote host's shell.
	Command []string
	// Workspace is the absolute directory the runtime runs in.
	Workspace string
	// Avoid names hosts that could not be reached earlier in the same
	// session start (docs/behaviour.md#ssh): a launcher that chooses among
	// several hosts chooses none of them. A launcher bound to one host
	// may ignore it; the application then gives up on that host.
	Avoid []string
	// Sandbox confines the runtime (docs/behaviour.md#sandbox); the zero
	// value runs it unconfined. A launcher that cannot build the sandbox
	// refuses the request (agent_not_found), never starting the runtime
	// unconfined.
	Sandbox domain.Sandbox
	// AddDirs are the session's additional directories, which a
	// sandboxed runtime may write beside the workspace.
	AddDirs []string
}

// Launcher turns a request into a Plan: it validates the workspace and
// resolves the program (docs/behaviour.md#start-up, steps 1 and 2) and
// starts nothing. A transport (the local process, the ssh binary, a native
// SSH client) implements it.
//
// Prepare returns a *domain.AgentError: invalid_workspace_cwd for a
// workspace that cannot be run in, agent_not_found for a program that
// cannot be found (for SSH: the local ssh binary), or a sandbox that
// cannot be built on this host (docs/behaviour.md#sandbox).
type Launcher interface {
	Prepare(req LaunchRequest) (Plan, error)
}

// Target says where a Plan runs the runtime.
type Target struct {
	// Host is "" for this machine, else the remote host (as configured,
	// e.g. "build-7" or "user@10.0.0.5:2222").
	Host string
}

// Remote reports whether the runtime runs on another host. A remote
// launch delivers no MCP servers, is never claimed by a measurement
// source and is never restarted (docs/behaviour.md#ssh).
func (t Target) Remote() bool { return t.Host != "" }

// Plan is a validated launch. The application starts each Plan at most
// once: a restart to settle the measurement source prepares a new one.
type Plan interface {
	// Target says where the runtime runs.
	Target() Target
	// Start starts the runtime with env appended to the environment it
	// would otherwise get (so env overrides inherited values). ctx bounds
	// the start only. Errors are *domain.AgentError values of kind
	// port_exit (or turn_cancelled when ctx is done).
	Start(ctx context.Context, env []string) (Process, error)
}

// Discarder is an optional interface of a Plan that holds something
// until it is started (a pool's reserved host slot,
// docs/behaviour.md#ssh): the application calls Discard, once, on a
// prepared plan it will not start, so that what it holds is given back.
// A started plan gives it back when its Process is released.
type Discarder interface {
	Discard()
}

// Identity names a started runtime.
type Identity struct {
	// PID is the local process acpdrive watches: the runtime itself, or
	// the local ssh relay of a remote launch; 0 when no local process
	// exists (a native SSH channel).
	PID int
	// Host is "" for a local runtime, else the host it runs on.
	Host string
	// RemotePID is the runtime's process ID on Host when the transport
	// learned it, else 0.
	RemotePID int
}

// Process is a started runtime: its streams and its process tree, local or
// remote. The application drives teardown in the fixed order of
// docs/behaviour.md#teardown; each method does exactly one step of it and
// none blocks without bound.
type Process interface {
	// Identity names the runtime.
	Identity() Identity
	// Stdin is the runtime's standard input. Closing it is a teardown
	// step; Write must return once it is closed.
	Stdin() io.WriteCloser
	// Stdout is the runtime's standard output.
	Stdout() io.Reader
	// Terminate asks the runtime's tree to exit (SIGTERM to the group and
	// the leader, or its remote or platform equivalent).
	Terminate() error
	// Kill force-terminates the runtime's whole tree and re-sends until
	// nothing of it survives or its own bound passes. What survives is
	// returned as a *domain.SurvivorsError.
	Kill() error
	// Exited is closed once the watched process (or channel) has ended.
	Exited() <-chan struct{}
	// Exit reports how it ended; valid once Exited is closed.
	Exit() domain.ExitStatus
	// CloseStdout closes the read side of standard output, unblocking any
	// reader even when a descendant still holds the write end.
	CloseStdout() error
	// StderrTail returns the last bytes (at most 8 KiB) the runtime wrote
	// to standard error and whether earlier output was cut off. Once the
	// process has exited it first waits briefly (bounded) for standard
	// error to reach its end.
	StderrTail() (tail []byte, truncated bool)
	// Release drains standard error (bounded) and releases every stream.
	// It is the last step of teardown.
	Release() error
}
