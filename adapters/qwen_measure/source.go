package qwen_measure

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
	SourceName = "qwen_chats"
	// RuntimeName is the agentInfo.name Qwen Code reports.
	RuntimeName = "qwen-code"

	packageName = "@qwen-code/qwen-code"
	binName     = "qwen"

	defaultSettle = 300 * time.Millisecond
	pollEvery     = 10 * time.Millisecond
)

// Options configure a Source.
type Options struct {
	// Logger receives the source's Debug records; nil discards them.
	Logger *slog.Logger
	// Home is the HOME the runtime sees; empty: this process's home
	// directory when Arm runs.
	Home string
	// Settle is how long the journal must stay unchanged after a counted
	// record to end a turn that wrote no checkpoint; zero means 300 ms.
	Settle time.Duration
}

// Source measures Qwen Code's token usage from its chats journal. It is
// safe for concurrent use; each Arm is one start.
type Source struct {
	log    *slog.Logger
	home   string
	settle time.Duration
	poll   time.Duration
}

var _ ports.MeasurementSource = (*Source)(nil)

// New returns the Qwen Code chats source.
func New(o Options) *Source {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	settle := o.Settle
	if settle <= 0 {
		settle = defaultSettle
	}
	return &Source{log: log.With("source", SourceName), home: o.Home, settle: settle, poll: pollEvery}
}

// Name is "qwen_chats".
func (s *Source) Name() string { return SourceName }

// RuntimeName is "qwen-code".
func (s *Source) RuntimeName() string { return RuntimeName }

// Claims reports whether a word of command names Qwen Code (see the
// package documentation for the rule).
func (s *Source) Claims(command []string) bool {
	return journaltail.Claims(command, packageName, binName)
}

// Arm creates the start's private directory and resolves the home the
// journal is under. The measurement carries no environment.
func (s *Source) Arm(ctx context.Context) (ports.Measurement, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	home := s.home
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return nil, fmt.Errorf("qwen chats source: no home directory: %w", err)
		}
		home = h
	}
	dir, err := journaltail.PrivateDir("", "acpdrive-qwen-measure-")
	if err != nil {
		return nil, fmt.Errorf("qwen chats source: %w", err)
	}
	s.log.Debug("armed", "home", home, "dir", dir)
	return newMeasurement(s, dir, filepath.Join(home, ".qwen", "projects")), nil
}
