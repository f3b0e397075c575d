package ports

import (
	"context"
	"io"
)

// LaunchRequest describes one start of the runtime.
type LaunchRequest struct {
	// Command is the runtime's command line split into words; Command[0]
	// names the program. A local launcher resolves it from PATH.
	Command []string
	// Workspace is the absolute directory the runtime runs in. The
	// launcher validates it (non-empty, absolute, existing directory).
	Workspace string
	// ExtraEnv is appended to the full parent environment (KEY=VALUE).
	ExtraEnv []string
}

// Launcher starts the runtime process. Implementations return a
// *domain.AgentError of kind agent_not_found, invalid_workspace_cwd or
// port_exit when the process cannot be started.
type Launcher interface {
	Launch(ctx context.Context, req LaunchRequest) (Process, error)
}

// Process is a started runtime: its pipes and its process group.
//
// The application drives teardown in the fixed order of the specification;
// each method does exactly one step of it.
type Process interface {
	// PID is the process ID of the direct child (on SSH, the local ssh).
	PID() int
	// Stdin is the runtime's standard input.
	Stdin() io.WriteCloser
	// Stdout is the runtime's standard output.
	Stdout() io.Reader
	// Terminate asks the process group to exit gracefully (SIGTERM).
	Terminate() error
	// Kill force-terminates the process group (SIGKILL), re-sending for up
	// to two seconds until no member of the group survives.
	Kill() error
	// Exited is closed once the direct child has exited and been reaped.
	Exited() <-chan struct{}
	// ExitStatus reports how the child ended, as "exit status N" or
	// "signal: <name>". It is valid once Exited is closed.
	ExitStatus() string
	// ExitCode is the child's exit code, or -1 when it was signalled or
	// has not exited.
	ExitCode() int
	// CloseStdout closes the read end of standard output, unblocking any
	// reader even when a descendant still holds the write end.
	CloseStdout() error
	// StderrTail returns the last bytes (at most 8 KiB) the runtime wrote
	// to standard error and whether earlier output was cut off. Once the
	// process has exited it first waits briefly (bounded) for standard
	// error to reach end of file.
	StderrTail() (tail []byte, truncated bool)
	// Release drains standard error (bounded), and releases every pipe.
	// It is the last step of teardown.
	Release() error
}
