package journaltail

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/acpdrive/acpdrive/adapters/internal/logs"
	"github.com/acpdrive/acpdrive/ports"
)

// Spec is what a measurement source is apart from how it reads its
// runtime's output (docs/behaviour.md#token-accounting).
type Spec struct {
	// Adapter names the source's errors ("qwen_measure").
	Adapter string
	// Name is the source's Name ("qwen_chats"); it tags the log too.
	Name string
	// RuntimeName is the agentInfo.name the runtime reports; RuntimeNames
	// are the other names it has reported (older or newer releases), which
	// Recognizes accepts too.
	RuntimeName  string
	RuntimeNames []string
	// Package is the runtime's npm package ("@scope/name"), Packages the
	// other packages it shipped in, and Bins the program names that run
	// it: Claims's rule (see NamesPackage).
	Package  string
	Packages []string
	Bins     []string
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
	// Open makes the measurement of one start.
	Open func(Start) (ports.Measurement, error)
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

// Start is one armed start as a Spec's Open sees it.
type Start struct {
	// Adapter names the errors of the start ("qwen_measure").
	Adapter string
	// Dir is the start's private directory (mode 0700); Home is where
	// the runtime keeps its files (see Spec.HomeEnv).
	Dir, Home string
	// Log is the source's logger, tagged with its name.
	Log *slog.Logger
	// Settle and Poll are the source's waits (see Waiting).
	Settle, Poll time.Duration
}

// Private is the start's directory, for its measurement to release.
func (st Start) Private() Private { return NewPrivate(st.Adapter, st.Dir) }

// Follow is the Open of a runtime read by a Follower over journal(home).
func Follow(journal func(home string) Journal) func(Start) (ports.Measurement, error) {
	return func(st Start) (ports.Measurement, error) {
		return NewFollower(journal(st.Home), FollowerOptions{
			Name: st.Adapter, Log: st.Log, Settle: st.Settle, Poll: st.Poll, Dir: st.Dir,
		}), nil
	}
}

// Source is the ports.MeasurementSource every measurement source is: its
// names, its claim rule, its tuning and the Arm that makes a start's
// private directory and resolves the runtime's home before the Spec's
// Open makes the measurement. An adapter's Source embeds one.
type Source struct {
	spec    Spec
	log     *slog.Logger
	tempDir string
	home    string
	settle  time.Duration
	poll    time.Duration
}

var (
	_ ports.MeasurementSource = (*Source)(nil)
	_ ports.RuntimeRecognizer = (*Source)(nil)
)

// NewSource returns the source of spec, tuned by t.
func NewSource(spec Spec, t Tuning) Source {
	s := Source{spec: spec, log: logs.OrDiscard(t.Logger).With("source", spec.Name), tempDir: t.TempDir, home: t.Home, settle: t.Settle, poll: t.Poll}
	if s.settle <= 0 {
		s.settle = spec.Settle
	}
	if s.poll <= 0 {
		s.poll = spec.Poll
	}
	return s
}

// Name is the source's name in logs and events.
func (s *Source) Name() string { return s.spec.Name }

// RuntimeName is the agentInfo.name of the runtime the source reads.
func (s *Source) RuntimeName() string { return s.spec.RuntimeName }

// Recognizes reports whether agentName is the runtime: RuntimeName or one
// of RuntimeNames, case aside, with or without a trailing "@<version>".
func (s *Source) Recognizes(agentName string) bool {
	name := strings.ToLower(strings.TrimSpace(agentName))
	if at := strings.LastIndexByte(name, '@'); at > 0 {
		name = name[:at]
	}
	if name == "" {
		return false
	}
	for _, n := range append([]string{s.spec.RuntimeName}, s.spec.RuntimeNames...) {
		if strings.ToLower(n) == name {
			return true
		}
	}
	return false
}

// Claims reports whether a word of command names one of the runtime's
// packages or one of its programs (see NamesPackage).
func (s *Source) Claims(command []string) bool {
	for _, pkg := range append([]string{s.spec.Package}, s.spec.Packages...) {
		if Claims(command, pkg, s.spec.Bins...) {
			return true
		}
	}
	return false
}

// Arm prepares one start: ctx not done, the home resolved, a private
// directory (mode 0700), then the Spec's Open over both. When Open fails
// the directory is removed again.
func (s *Source) Arm(ctx context.Context) (ports.Measurement, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	home, err := s.resolveHome()
	if err != nil {
		return nil, err
	}
	dir, err := PrivateDir(s.tempDir, s.spec.DirPrefix)
	if err != nil {
		return nil, fmt.Errorf("%s: private directory: %w", s.spec.Adapter, err)
	}
	m, err := s.spec.Open(Start{Adapter: s.spec.Adapter, Dir: dir, Home: home, Log: s.log, Settle: s.settle, Poll: s.poll})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	s.log.Debug("armed", "dir", dir, "home", home)
	return m, nil
}

// resolveHome is Tuning.Home, else the Spec's place for it.
func (s *Source) resolveHome() (string, error) {
	if s.home != "" {
		return s.home, nil
	}
	if s.spec.HomeEnv != "" {
		if d := os.Getenv(s.spec.HomeEnv); d != "" {
			return d, nil
		}
	}
	h, err := os.UserHomeDir()
	switch {
	case err == nil:
		return joinAll(h, s.spec.HomeSub), nil
	case s.spec.HomeOptional:
		return "", nil
	}
	return "", fmt.Errorf("%s: no home directory: %w", s.spec.Adapter, err)
}
