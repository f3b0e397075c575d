package localexec

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/acpdrive/acpdrive/adapters/internal/statedirs"
	"github.com/acpdrive/acpdrive/domain"
)

// sandboxPlan is what a sandboxed plan keeps from Prepare
// (docs/behaviour.md#sandbox).
type sandboxPlan struct {
	bwrap   string // absolute path of bubblewrap
	set     domain.Sandbox
	addDirs []string
}

// prepareSandbox refuses a sandbox this host cannot build: another
// platform than Linux, or no bubblewrap on PATH. Both are agent_not_found:
// the runtime is never started unconfined instead.
func (l *Launcher) prepareSandbox(set domain.Sandbox, addDirs []string) (*sandboxPlan, error) {
	if !set.Enabled {
		return nil, nil
	}
	if l.goos != "linux" {
		return nil, domain.NewError(domain.KindAgentNotFound, domain.SandboxUnsupportedMessage(l.goos)).WithReason(domain.ReasonNotOffered)
	}
	path, err := l.lookPath("bwrap")
	if err != nil {
		return nil, domain.WrapError(domain.KindAgentNotFound, domain.MsgSandboxNoBwrap, err).WithReason(domain.ReasonProgramMissing)
	}
	return &sandboxPlan{bwrap: path, set: set, addDirs: append([]string(nil), addDirs...)}, nil
}

// wrap returns the command line that runs path/args inside the sandbox:
// bubblewrap started with SIGTERM ignored (domain.SandboxOuterShim), the
// runtime with it restored (domain.SandboxInnerShim).
// env is what acpdrive adds to the runtime's environment: the
// directories it points into under the temporary directory (a
// measurement source's) stay writable. What the host's /tmp holds now
// stays visible, read-only, on the sandbox's private /tmp.
func (s *sandboxPlan) wrap(path string, args []string, workspace string, env []string) (string, []string) {
	home, _ := os.UserHomeDir()
	var writable []string
	if home != "" {
		for _, d := range statedirs.All() {
			writable = append(writable, d.Paths(home, os.Getenv)...)
		}
	}
	for _, w := range s.set.Writable {
		if strings.HasPrefix(w, "~/") && home == "" {
			continue
		}
		if w = domain.ExpandHome(w, home); filepath.IsAbs(w) {
			writable = append(writable, w)
		}
	}
	writable = append(writable, domain.SandboxEnvDirs(env, os.TempDir())...)
	argv := append([]string{"sh", "-c", domain.SandboxOuterShim, s.bwrap}, domain.SandboxArgs(domain.SandboxLayout{
		Workspace: workspace, AddDirs: s.addDirs, TmpKeep: keptTmp(path, args), Writable: writable, Network: s.set.Network,
	})...)
	argv = append(argv, "/bin/sh", "-c", domain.SandboxInnerShim, "sh", path)
	if len(args) > 1 {
		argv = append(argv, args[1:]...)
	}
	return "/bin/sh", argv
}

// keptTmp is what of the host's /tmp stays visible in the sandbox
// (domain.SandboxKeptTmp): acpdrive's own entries, and those holding the
// runtime's program, every absolute path on its command line (a runtime
// started through env or an interpreter names its script there) and
// acpdrive's own executable (which the tool-server beacon runs). Symbolic
// links are left out: bubblewrap would mount what they point to in their
// place.
func keptTmp(program string, args []string) []string {
	var names []string
	if entries, err := os.ReadDir(domain.SandboxTmp); err == nil {
		for _, e := range entries {
			if e.Type()&os.ModeSymlink == 0 {
				names = append(names, e.Name())
			}
		}
	}
	paths := []string{program}
	if len(args) > 1 {
		paths = append(paths, domain.SandboxCommandPaths(args[1:])...)
	}
	if self, err := os.Executable(); err == nil {
		paths = append(paths, self)
	}
	return domain.SandboxKeptTmp(names, paths)
}

// hostOS is the platform a Launcher believes it runs on; tests change it.
var hostOS = runtime.GOOS
