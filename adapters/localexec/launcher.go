package localexec

import (
	"context"
	"fmt"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/adapters/internal/logs"
	"github.com/acpdrive/acpdrive/adapters/internal/procio"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// msgStartCancelled is the message for a start whose context is done.
const msgStartCancelled = "session start cancelled"

// Options configures a Launcher. The zero value is usable.
type Options struct {
	// Logger receives the adapter's diagnostics. Nil discards them. Lines
	// the runtime writes to standard error are logged at Debug level only.
	Logger *slog.Logger
	// LookPath resolves a program name to an executable path. Nil means
	// exec.LookPath. A name containing a path separator is checked
	// directly rather than searched for.
	LookPath func(file string) (string, error)
	// Contain makes teardown reach descendants that left the runtime's
	// process group (see the package documentation). It works on Linux
	// only and has no effect elsewhere. Turning it on makes this process
	// a child subreaper the first time a runtime is started.
	Contain bool
}

// Launcher starts the agent runtime as a local subprocess in its own
// process group. It implements ports.Launcher and is safe for concurrent
// use.
type Launcher struct {
	logger   *slog.Logger
	lookPath func(string) (string, error)
	contain  bool
	goos     string // runtime.GOOS; tests set another

	// killWindow and resendInterval bound Kill; tests shorten them.
	killWindow     time.Duration
	resendInterval time.Duration
	// spare, when set (by tests only), names processes that Kill and
	// Terminate must not signal by PID, standing in for a process that
	// cannot be killed.
	spare func(pid int) bool
	// scanTable, when set (by tests only), makes containment read the
	// whole process table, the fallback of the tree walk.
	scanTable bool

	unsupportedOnce sync.Once
}

var _ ports.Launcher = (*Launcher)(nil)

// New returns a Launcher configured by opts.
func New(opts Options) *Launcher {
	l := &Launcher{
		logger:         opts.Logger,
		lookPath:       opts.LookPath,
		contain:        opts.Contain,
		goos:           hostOS,
		killWindow:     killWindow,
		resendInterval: killResendInterval,
	}
	l.logger = logs.OrDiscard(l.logger)
	if l.lookPath == nil {
		l.lookPath = exec.LookPath
	}
	return l
}

// Prepare validates req and resolves its program; it starts nothing.
//
// Errors are *domain.AgentError values: invalid_workspace_cwd when the
// workspace is empty, not valid UTF-8, relative, missing or not a
// directory; agent_not_found when the command is empty or blank or its
// program cannot be found, or when req asks for a sandbox and this host is
// not Linux or has no bubblewrap (docs/behaviour.md#sandbox).
func (l *Launcher) Prepare(req ports.LaunchRequest) (ports.Plan, error) {
	if err := procio.CheckLocalWorkspace(req.Workspace); err != nil {
		return nil, err
	}
	path, err := l.resolveProgram(req.Command)
	if err != nil {
		return nil, err
	}
	sb, err := l.prepareSandbox(req.Sandbox, req.AddDirs)
	if err != nil {
		return nil, err
	}
	return &plan{
		l:       l,
		path:    path,
		args:    append([]string(nil), req.Command...),
		dir:     req.Workspace,
		sandbox: sb,
	}, nil
}

// plan is a validated local launch. It implements ports.Plan.
type plan struct {
	l    *Launcher
	path string   // absolute path of the program
	args []string // the command line, args[0] as the caller wrote it
	dir  string   // the workspace
	// sandbox, when not nil, runs the program under bubblewrap
	// (docs/behaviour.md#sandbox).
	sandbox *sandboxPlan
}

var _ ports.Plan = (*plan)(nil)

// Target reports this machine.
func (p *plan) Target() ports.Target { return ports.Target{} }

// Start starts the program in the workspace, in a process group of its
// own, with env appended to this process's environment (so env overrides
// inherited values). It may be called more than once; each call starts a
// new process.
//
// Errors are *domain.AgentError values: turn_cancelled when ctx is
// already done; port_exit when a pipe cannot be made, the platform is not
// supported, or the process fails to start. ctx bounds only the start;
// the process lives until the caller tears it down.
func (p *plan) Start(ctx context.Context, env []string) (ports.Process, error) {
	proc, err := start(ctx, p.l, p, env)
	if err != nil {
		return nil, err
	}
	return proc, nil
}

// resolveProgram returns the absolute path of command's program. The path
// is made absolute against this process's working directory so that the
// file checked is the file run, whatever the child's directory.
func (l *Launcher) resolveProgram(command []string) (string, error) {
	if len(command) == 0 || strings.TrimSpace(command[0]) == "" {
		return "", domain.NewError(domain.KindAgentNotFound, domain.MsgEmptyCommand).WithReason(domain.ReasonConfigurationInvalid)
	}
	name := command[0]
	path, err := l.lookPath(name)
	if err != nil {
		msg := fmt.Sprintf("agent command %q was not found on PATH", name)
		if strings.ContainsRune(name, '/') || strings.ContainsRune(name, filepath.Separator) {
			// A name with a separator is checked where it points, not
			// searched for.
			msg = fmt.Sprintf("agent command %q was not found", name)
		}
		return "", domain.WrapError(domain.KindAgentNotFound, msg, err).WithReason(domain.ReasonProgramMissing)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", domain.WrapError(domain.KindAgentNotFound,
			fmt.Sprintf("agent command %q could not be resolved to an absolute path", name), err).WithReason(domain.ReasonProgramMissing)
	}
	// Platform check of what was found (platform_*.go): none on Unix; on
	// Windows a batch file is refused.
	if err := checkProgram(name, abs); err != nil {
		return "", err
	}
	return abs, nil
}
