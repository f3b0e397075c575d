package codex_measure

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/acpdrive/acpdrive/adapters/internal/journaltail"
	"github.com/acpdrive/acpdrive/ports"
)

const (
	// sourceName is the source's name in logs and events.
	sourceName = "codex_rollout"
	// runtimeName is the agentInfo.name codex-acp reports in initialize.
	runtimeName = "codex-acp"
	// packageName is codex-acp's npm package.
	packageName = "@zed-industries/codex-acp"
)

// Options configures a Source. The zero value is usable.
type Options struct {
	// Logger receives the source's diagnostics. Nil discards them.
	Logger *slog.Logger
	// Home is the CODEX_HOME the runtime uses. Empty means acpdrive's own
	// CODEX_HOME, else ~/.codex (see the package documentation).
	Home string
	// Now is the clock, for the date folders searched first and a
	// continued session's start. Nil means time.Now.
	Now func() time.Time
	// Poll is the interval between reads while TurnUsage waits. Zero
	// means 25 ms.
	Poll time.Duration
}

// Source is the measurement source for codex-acp's rollout files.
type Source struct {
	log  *slog.Logger
	home string
	now  func() time.Time
	poll time.Duration
}

var _ ports.MeasurementSource = (*Source)(nil)

// New returns a Source.
func New(opts Options) *Source {
	s := &Source{log: opts.Logger, home: opts.Home, now: opts.Now, poll: opts.Poll}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.poll <= 0 {
		s.poll = 25 * time.Millisecond
	}
	return s
}

// Name is "codex_rollout".
func (s *Source) Name() string { return sourceName }

// RuntimeName is "codex-acp", the agentInfo.name codex-acp reports.
func (s *Source) RuntimeName() string { return runtimeName }

// Claims reports whether the program or an argument of command names
// codex-acp (see the package documentation for the rule).
func (s *Source) Claims(command []string) bool {
	for _, w := range command {
		if namesCodexACP(w) {
			return true
		}
	}
	return false
}

// namesCodexACP reports whether one word of a command names codex-acp.
func namesCodexACP(w string) bool {
	if w == packageName || strings.HasPrefix(w, packageName+"@") {
		return true
	}
	parts := strings.FieldsFunc(w, func(r rune) bool { return r == '/' || r == '\\' })
	if len(parts) == 0 {
		return false
	}
	switch parts[len(parts)-1] {
	case "codex-acp", "codex-acp.js", "codex-acp.exe":
		return true
	}
	scope, pkg, _ := strings.Cut(packageName, "/")
	for i := 0; i+1 < len(parts); i++ {
		if parts[i] == scope && parts[i+1] == pkg {
			return true
		}
	}
	return false
}

// Arm creates the start's private temporary directory. The returned
// measurement asks for no environment: CODEX_HOME stays where the
// runtime's sessions are kept (see the package documentation).
func (s *Source) Arm(ctx context.Context) (ports.Measurement, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	home, err := s.codexHome()
	if err != nil {
		return nil, err
	}
	dir, err := journaltail.PrivateDir("", "acpdrive-codex-measure-")
	if err != nil {
		return nil, fmt.Errorf("codex_measure: temporary directory: %w", err)
	}
	s.log.Debug("codex rollout source armed", "codex_home", home, "dir", dir)
	return &measurement{src: s, home: home, dir: dir}, nil
}

// codexHome is the CODEX_HOME the runtime is taken to use.
func (s *Source) codexHome() (string, error) {
	if s.home != "" {
		return s.home, nil
	}
	if h := os.Getenv("CODEX_HOME"); h != "" {
		return h, nil
	}
	user, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("codex_measure: no CODEX_HOME and no home directory: %w", err)
	}
	return filepath.Join(user, ".codex"), nil
}
