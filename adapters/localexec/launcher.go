package localexec

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// msgWorkspaceNotAbsolute is the message for a relative workspace path.
const msgWorkspaceNotAbsolute = "workspace path is not absolute"

// Options configures a Launcher. The zero value is usable.
type Options struct {
	// Logger receives the adapter's diagnostics. Nil discards them. Lines
	// the runtime writes to standard error are logged at Debug level only.
	Logger *slog.Logger
	// LookPath resolves a program name to an executable path. Nil means
	// exec.LookPath. A name containing a path separator is checked
	// directly rather than searched for.
	LookPath func(file string) (string, error)
}

// Launcher starts the agent runtime as a local subprocess in its own
// process group. It implements ports.Launcher and is safe for concurrent
// use.
type Launcher struct {
	logger   *slog.Logger
	lookPath func(string) (string, error)
}

var _ ports.Launcher = (*Launcher)(nil)

// New returns a Launcher configured by opts.
func New(opts Options) *Launcher {
	l := &Launcher{logger: opts.Logger, lookPath: opts.LookPath}
	if l.logger == nil {
		l.logger = slog.New(slog.DiscardHandler)
	}
	if l.lookPath == nil {
		l.lookPath = exec.LookPath
	}
	return l
}

// Launch validates req, resolves its program and starts it.
//
// Errors are *domain.AgentError values: invalid_workspace_cwd when the
// workspace is empty, relative, missing or not a directory;
// agent_not_found when the command is empty or blank or its program cannot
// be found; port_exit when a pipe cannot be made, the context is already
// done, or the process fails to start.
//
// ctx bounds only the start itself; the started process lives until the
// caller tears it down through the returned Process.
func (l *Launcher) Launch(ctx context.Context, req ports.LaunchRequest) (ports.Process, error) {
	if err := validateWorkspace(req.Workspace); err != nil {
		return nil, err
	}
	path, err := l.resolveProgram(req.Command)
	if err != nil {
		return nil, err
	}
	p, err := start(ctx, l.logger, path, req)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// validateWorkspace checks that dir is a non-empty absolute path naming an
// existing directory.
func validateWorkspace(dir string) error {
	if dir == "" {
		return domain.NewError(domain.KindInvalidWorkspaceCWD, domain.MsgEmptyWorkspace)
	}
	if !filepath.IsAbs(dir) {
		return domain.WrapError(domain.KindInvalidWorkspaceCWD, msgWorkspaceNotAbsolute,
			fmt.Errorf("workspace %q", dir))
	}
	info, err := os.Stat(dir)
	if err != nil {
		// Anything that keeps the path from being inspected (ENOENT,
		// ENOTDIR on a parent, EACCES) leaves no directory to run in; the
		// cause tells which.
		return domain.WrapError(domain.KindInvalidWorkspaceCWD, domain.MsgWorkspaceMissing, err)
	}
	if !info.IsDir() {
		return domain.WrapError(domain.KindInvalidWorkspaceCWD, domain.MsgWorkspaceNotDir,
			fmt.Errorf("workspace %q", dir))
	}
	return nil
}

// resolveProgram returns the absolute path of command's program. The path
// is made absolute against this process's working directory so that the
// file checked is the file run, whatever the child's directory.
func (l *Launcher) resolveProgram(command []string) (string, error) {
	if len(command) == 0 || strings.TrimSpace(command[0]) == "" {
		return "", domain.NewError(domain.KindAgentNotFound, domain.MsgEmptyCommand)
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
		return "", domain.WrapError(domain.KindAgentNotFound, msg, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", domain.WrapError(domain.KindAgentNotFound,
			fmt.Sprintf("agent command %q could not be resolved to an absolute path", name), err)
	}
	return abs, nil
}
