package journaltail

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/acpdrive/acpdrive/ports"
)

// Spec is what a measurement source is apart from how it reads its
// runtime's output (docs/behaviour.md#token-accounting).
type Spec struct {
	// Adapter names the source's errors ("qwen_measure").
	Adapter string
	// Name is the source's Name ("qwen_chats"); it tags the log too.
	Name string
	// RuntimeName is the agentInfo.name the runtime reports.
	RuntimeName string
	// Package is the runtime's npm package ("@scope/name") and Bins the
	// program names that run it: Claims's rule (see NamesPackage).
	Package string
	Bins    []string
	// DirPrefix names each start's private directory.
	DirPrefix string
	// HomeEnv and HomeSub say where the runtime keeps its files when
	// Tuning.Home is empty: $HomeEnv when set (HomeEnv empty: never),
	// else HomeSub under this process's home directory.
	HomeEnv string
	HomeSub []string
	// HomeOptional makes a missing home directory leave the home empty
	// instead of failing Arm.
	HomeOptional bool
	// Settle and Poll are the defaults of Tuning's.
	Settle, Poll time.Duration
}

// Tuning is what a source's options set of the skeleton; a zero field
// takes the Spec's default.
type Tuning struct {
	// Logger receives the source's Debug records; nil discards them.
	Logger *slog.Logger
	// TempDir is where the private directories are made; empty: the
	// system's directory for temporary files.
	TempDir string
	// Home is where the runtime keeps its files as it sees them; empty:
	// the Spec's HomeEnv or HomeSub, resolved when Arm runs.
	Home string
	// Settle and Poll are the source's waits (see Waiting).
	Settle, Poll time.Duration
}

// Identity is the part of a ports.MeasurementSource that names it and
// its runtime. An adapter's Source embeds it.
type Identity struct{ spec Spec }

// Name is the source's name in logs and events.
func (i Identity) Name() string { return i.spec.Name }

// RuntimeName is the agentInfo.name of the runtime the source reads.
func (i Identity) RuntimeName() string { return i.spec.RuntimeName }

// Claims reports whether a word of command names the runtime's package
// or one of its programs (see NamesPackage).
func (i Identity) Claims(command []string) bool {
	return Claims(command, i.spec.Package, i.spec.Bins...)
}

// Source is the skeleton every measurement source shares: its Identity,
// its tuning and the Arm that makes a start's private directory. An
// adapter holds one and adds where its runtime's output is and how it is
// read.
type Source struct {
	// Identity is the source's, for the adapter's Source to embed.
	Identity Identity

	log     *slog.Logger
	tempDir string
	home    string
	settle  time.Duration
	poll    time.Duration
}

// NewSource returns the skeleton of spec, tuned by t.
func NewSource(spec Spec, t Tuning) Source {
	log := t.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := Source{Identity: Identity{spec}, log: log.With("source", spec.Name), tempDir: t.TempDir, home: t.Home, settle: t.Settle, poll: t.Poll}
	if s.settle <= 0 {
		s.settle = spec.Settle
	}
	if s.poll <= 0 {
		s.poll = spec.Poll
	}
	return s
}

// Log is the source's logger, tagged with its name.
func (s *Source) Log() *slog.Logger { return s.log }

// Settle is how long a journal must stay unchanged to settle a turn.
func (s *Source) Settle() time.Duration { return s.settle }

// Poll is the pause between two reads while a turn is waited for.
func (s *Source) Poll() time.Duration { return s.poll }

// Errorf is an error of the source: its adapter's name first.
func (s *Source) Errorf(format string, args ...any) error {
	return fmt.Errorf(s.Identity.spec.Adapter+": "+format, args...)
}

// Following returns the options of a Follower of this source over dir.
func (s *Source) Following(dir string) FollowerOptions {
	return FollowerOptions{Name: s.Identity.spec.Adapter, Log: s.log, Settle: s.settle, Poll: s.poll, Dir: dir}
}

// Arm prepares one start: ctx not done, the home resolved, a private
// directory (mode 0700), then open's measurement over both. When open
// fails the directory is removed again.
func (s *Source) Arm(ctx context.Context, open func(dir, home string) (ports.Measurement, error)) (ports.Measurement, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	home, err := s.resolveHome()
	if err != nil {
		return nil, err
	}
	dir, err := PrivateDir(s.tempDir, s.Identity.spec.DirPrefix)
	if err != nil {
		return nil, s.Errorf("private directory: %w", err)
	}
	m, err := open(dir, home)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	s.log.Debug("armed", "dir", dir, "home", home)
	return m, nil
}

// Follow is Arm for a runtime read by a Follower over journal(home).
func (s *Source) Follow(ctx context.Context, journal func(home string) Journal) (ports.Measurement, error) {
	return s.Arm(ctx, func(dir, home string) (ports.Measurement, error) {
		return NewFollower(journal(home), s.Following(dir)), nil
	})
}

// resolveHome is Tuning.Home, else the Spec's place for it.
func (s *Source) resolveHome() (string, error) {
	spec := s.Identity.spec
	if s.home != "" {
		return s.home, nil
	}
	if spec.HomeEnv != "" {
		if d := os.Getenv(spec.HomeEnv); d != "" {
			return d, nil
		}
	}
	h, err := os.UserHomeDir()
	switch {
	case err == nil:
		return joinAll(h, spec.HomeSub), nil
	case spec.HomeOptional:
		return "", nil
	}
	return "", s.Errorf("no home directory: %w", err)
}
