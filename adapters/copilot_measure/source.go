package copilot_measure

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/acpdrive/acpdrive/adapters/internal/journaltail"
	"github.com/acpdrive/acpdrive/ports"
)

const (
	// SourceName is the source's Name.
	SourceName = "copilot_events"
	// RuntimeName is the agentInfo.name Copilot CLI reports.
	RuntimeName = "Copilot"

	packageName = "@github/copilot"
	binName     = "copilot"

	defaultSettle = 300 * time.Millisecond
	pollEvery     = 10 * time.Millisecond
)

// Options configure a Source.
type Options struct {
	// Logger receives the source's Debug records; nil discards them.
	Logger *slog.Logger
	// StateDir is Copilot CLI's state directory as the runtime sees it;
	// empty: $HOME/.copilot of this process's environment when Arm runs.
	StateDir string
	// Settle is how long the journal must stay unchanged after a counted
	// record to end a turn that wrote no final reply; zero means 300 ms.
	Settle time.Duration
}

// Source measures Copilot CLI's token usage from its session-state
// journal. It is safe for concurrent use; each Arm is one start.
type Source struct {
	log    *slog.Logger
	state  string
	settle time.Duration
	poll   time.Duration
}

var _ ports.MeasurementSource = (*Source)(nil)

// New returns the Copilot CLI session-state source.
func New(o Options) *Source {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	settle := o.Settle
	if settle <= 0 {
		settle = defaultSettle
	}
	return &Source{log: log.With("source", SourceName), state: o.StateDir, settle: settle, poll: pollEvery}
}

// Name is "copilot_events".
func (s *Source) Name() string { return SourceName }

// RuntimeName is "Copilot".
func (s *Source) RuntimeName() string { return RuntimeName }

// Claims reports whether a word of command names Copilot CLI (see the
// package documentation for the rule).
func (s *Source) Claims(command []string) bool {
	return journaltail.Claims(command, packageName, binName)
}

// Arm creates the start's private directory and resolves the state
// directory. The measurement carries no environment.
func (s *Source) Arm(ctx context.Context) (ports.Measurement, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	state := s.state
	if state == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return nil, fmt.Errorf("copilot events source: no home directory: %w", err)
		}
		state = filepath.Join(h, ".copilot")
	}
	dir, err := journaltail.PrivateDir("", "acpdrive-copilot-measure-")
	if err != nil {
		return nil, fmt.Errorf("copilot events source: %w", err)
	}
	s.log.Debug("armed", "state_dir", state, "dir", dir)
	return newMeasurement(s, dir, filepath.Join(state, "session-state")), nil
}
