package app

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"

	"github.com/acpdrive/acpdrive/ports"
)

// SkipTurns returns a launcher whose processes read a held session's
// messages with those of its first n turns left out: their updates and
// the answers carrying their stopReason (every other message is kept, the
// session/new answer among them). Attach through it follows turn n+1: a
// resumed batch continues the turn under way of a task of several prompts
// this way (docs/behaviour.md#batch-journal). n of 0 or less returns l.
func SkipTurns(l ports.Launcher, n int) ports.Launcher {
	if n <= 0 {
		return l
	}
	return skipTurns{l: l, n: n}
}

// skipTurns is SkipTurns' launcher.
type skipTurns struct {
	l ports.Launcher
	n int
}

// Prepare is l's, its plan's process filtered.
func (s skipTurns) Prepare(req ports.LaunchRequest) (ports.Plan, error) {
	p, err := s.l.Prepare(req)
	if err != nil {
		return p, err
	}
	return skipPlan{Plan: p, n: s.n}, nil
}

// skipPlan starts its plan's process, filtered.
type skipPlan struct {
	ports.Plan
	n int
}

// Start starts the plan's process and filters its output.
func (p skipPlan) Start(ctx context.Context, env []string) (ports.Process, error) {
	proc, err := p.Plan.Start(ctx, env)
	if err != nil {
		return nil, err
	}
	return &skipProcess{Process: proc, out: &turnSkipper{r: bufio.NewReaderSize(proc.Stdout(), 64<<10), left: p.n}}, nil
}

// skipProcess is a process whose output is filtered.
type skipProcess struct {
	ports.Process
	out *turnSkipper
}

// Stdout is the filtered output (one reader, whoever asks).
func (p *skipProcess) Stdout() io.Reader { return p.out }

// turnSkipper reads lines of messages, leaving out the updates and the
// stopReason answers until left such answers were left out.
type turnSkipper struct {
	r    *bufio.Reader
	left int
	buf  []byte
}

// Read reads the filtered messages.
func (s *turnSkipper) Read(p []byte) (int, error) {
	for len(s.buf) == 0 {
		if s.left <= 0 {
			return s.r.Read(p)
		}
		line, err := s.r.ReadBytes('\n')
		if len(line) > 0 && !s.skip(line) {
			s.buf = line
		}
		if err != nil && len(s.buf) == 0 {
			return 0, err
		}
		if err != nil {
			break
		}
	}
	n := copy(p, s.buf)
	s.buf = s.buf[n:]
	return n, nil
}

// skip reports whether line is left out, counting the answers left out.
func (s *turnSkipper) skip(line []byte) bool {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return false
	}
	var m struct {
		Method string `json:"method"`
		Result struct {
			StopReason string `json:"stopReason"`
		} `json:"result"`
	}
	if json.Unmarshal(line, &m) != nil {
		return false
	}
	switch {
	case m.Method == "session/update":
		return true
	case m.Method == "" && m.Result.StopReason != "":
		s.left--
		return true
	}
	return false
}
