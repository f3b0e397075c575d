package gemini_measure

import (
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/acpdrive/acpdrive/adapters/internal/journaltail"
	"github.com/acpdrive/acpdrive/ports"
)

// SourceName is the source's name in logs and events.
const SourceName = "gemini_telemetry"

// RuntimeName is the agentInfo.name Gemini CLI reports in initialize.
const RuntimeName = "gemini-cli"

// Package is the npm package of Gemini CLI.
const Package = "@google/gemini-cli"

// OutfileName is the telemetry file's name inside the armed directory.
const OutfileName = "telemetry.json"

// Defaults of Options.
const (
	// DefaultSettle is one telemetry batch interval of Gemini CLI (5 s)
	// and a margin.
	DefaultSettle = 6 * time.Second
	// DefaultPoll is how often the outfile is read while waiting.
	DefaultPoll = 100 * time.Millisecond
)

// Options configure a Source. The zero value is usable.
type Options struct {
	// Logger receives Debug records of what was read; nil discards.
	Logger *slog.Logger
	// Home is the home directory Gemini CLI runs with, whose .gemini
	// folder holds the session journal. Empty: GEMINI_CLI_HOME of this
	// process, else its home directory (the runtime inherits both unless
	// agent.command sets another).
	Home string
	// TempDir is where the private directories are made; empty: the
	// system's temporary directory.
	TempDir string
	// Settle is how long after a turn ended the outfile is given before
	// what it holds is taken as the turn's whole, when no later log
	// record shows it caught up sooner. Zero: DefaultSettle.
	Settle time.Duration
	// Poll is the outfile's polling interval. Zero: DefaultPoll.
	Poll time.Duration
}

// Source is the Gemini CLI measurement source. It is safe for concurrent
// use; each Arm returns an independent Measurement. Its Name is
// "gemini_telemetry", its RuntimeName "gemini-cli". Arm makes the start's
// private directory and the environment that points Gemini CLI's
// telemetry into it.
type Source struct{ journaltail.Source }

var _ ports.MeasurementSource = (*Source)(nil)

// New returns a Gemini CLI measurement source.
func New(opts Options) *Source {
	return &Source{journaltail.NewSource(journaltail.Spec{
		Adapter: "gemini_measure", Name: SourceName, RuntimeName: RuntimeName,
		Package: Package, Bins: []string{"gemini"}, DirPrefix: "acpdrive-gemini-telemetry-",
		// No home: no journal to fall back on; the outfile still counts.
		HomeEnv: "GEMINI_CLI_HOME", HomeOptional: true,
		Settle: DefaultSettle, Poll: DefaultPoll,
		Open: func(st journaltail.Start) (ports.Measurement, error) {
			return &measurement{
				st:      st,
				private: st.Private(),
				outfile: filepath.Join(st.Dir, OutfileName),
				done:    map[string]bool{},
			}, nil
		},
	}, journaltail.Tuning{Logger: opts.Logger, TempDir: opts.TempDir, Home: opts.Home, Settle: opts.Settle, Poll: opts.Poll})}
}

// Claims reports whether command names Gemini CLI (see the package doc).
func (s *Source) Claims(command []string) bool {
	for _, arg := range command {
		if s.namesGemini(arg) {
			return true
		}
		// A shell script argument: each of its blank-separated fields.
		if fields := strings.Fields(arg); len(fields) > 1 {
			for _, word := range fields {
				if s.namesGemini(word) {
					return true
				}
			}
		}
	}
	return false
}

// namesGemini reports whether one word names Gemini CLI: not an
// assignment, and, once unquoted, naming the package or its program.
func (s *Source) namesGemini(word string) bool {
	return !isAssignment(word) && s.Source.Claims([]string{strings.Trim(word, `"'`)})
}

// isAssignment reports whether word is NAME=value with NAME a shell
// variable name.
func isAssignment(word string) bool {
	name, _, ok := strings.Cut(word, "=")
	if !ok || name == "" {
		return false
	}
	for i, c := range name {
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case i > 0 && c >= '0' && c <= '9':
		default:
			return false
		}
	}
	return true
}
