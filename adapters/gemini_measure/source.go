package gemini_measure

import (
	"context"
	"fmt"
	"log/slog"
	"os"
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
// use; each Arm returns an independent Measurement.
type Source struct {
	log     *slog.Logger
	home    string
	tempDir string
	settle  time.Duration
	poll    time.Duration
}

var _ ports.MeasurementSource = (*Source)(nil)

// New returns a Gemini CLI measurement source.
func New(opts Options) *Source {
	s := &Source{log: opts.Logger, home: opts.Home, tempDir: opts.TempDir, settle: opts.Settle, poll: opts.Poll}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.settle <= 0 {
		s.settle = DefaultSettle
	}
	if s.poll <= 0 {
		s.poll = DefaultPoll
	}
	return s
}

// Name is "gemini_telemetry".
func (s *Source) Name() string { return SourceName }

// RuntimeName is "gemini-cli".
func (s *Source) RuntimeName() string { return RuntimeName }

// Claims reports whether command names Gemini CLI (see the package doc).
func (s *Source) Claims(command []string) bool {
	for _, arg := range command {
		if namesGemini(arg) {
			return true
		}
		// A shell script argument: each of its blank-separated fields.
		if fields := strings.Fields(arg); len(fields) > 1 {
			for _, word := range fields {
				if namesGemini(word) {
					return true
				}
			}
		}
	}
	return false
}

// namesGemini reports whether one word names Gemini CLI.
func namesGemini(word string) bool {
	if isAssignment(word) {
		return false
	}
	word = strings.Trim(word, `"'`)
	if word == Package || strings.HasPrefix(word, Package+"@") || strings.Contains(word, Package+"/") {
		return true
	}
	base := word[strings.LastIndexAny(word, `/\`)+1:]
	switch base {
	case "gemini", "gemini.cmd", "gemini.exe":
		return true
	}
	return false
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

// Arm makes the start's private directory and the environment that points
// Gemini CLI's telemetry into it.
func (s *Source) Arm(ctx context.Context) (ports.Measurement, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dir, err := journaltail.PrivateDir(s.tempDir, "acpdrive-gemini-telemetry-")
	if err != nil {
		return nil, fmt.Errorf("gemini telemetry directory: %w", err)
	}
	m := &measurement{
		src:     s,
		dir:     dir,
		outfile: filepath.Join(dir, OutfileName),
		home:    s.geminiHome(),
		done:    map[string]bool{},
	}
	s.log.Debug("gemini telemetry armed", "dir", dir)
	return m, nil
}

// geminiHome is the directory holding Gemini CLI's .gemini folder.
func (s *Source) geminiHome() string {
	if s.home != "" {
		return s.home
	}
	if h := os.Getenv("GEMINI_CLI_HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}
