package linewatch

import (
	"bytes"
	"context"
	"io"

	"github.com/acpdrive/acpdrive/ports"
)

// DefaultMaxLine is the longest runtime line given to Hooks.Received
// when Hooks.MaxLine is zero.
const DefaultMaxLine = 64 << 10

// Hooks are what a watching launcher calls; a nil hook is not called.
type Hooks struct {
	// Started is called with the host of each runtime started ("" for
	// this machine).
	Started func(host string)
	// Sent is called with each line written to a runtime, before it is
	// written. The slice is valid only during the call.
	Sent func(line []byte)
	// Watching reports whether the runtime's lines are wanted now; nil
	// means always.
	Watching func() bool
	// Received is called with each line a runtime wrote (without its
	// terminator) while Watching reports true. The slice is valid only
	// during the call.
	Received func(line []byte)
	// MaxLine is the longest line given to Received; zero means
	// DefaultMaxLine.
	MaxLine int
}

// Wrap is l with each runtime it starts watched by h.
func Wrap(l ports.Launcher, h Hooks) ports.Launcher {
	if h.MaxLine <= 0 {
		h.MaxLine = DefaultMaxLine
	}
	return launcher{Launcher: l, h: h}
}

// launcher is a watching ports.Launcher.
type launcher struct {
	ports.Launcher
	h Hooks
}

// Prepare prepares the launch with the wrapped launcher.
func (l launcher) Prepare(req ports.LaunchRequest) (ports.Plan, error) {
	p, err := l.Launcher.Prepare(req)
	if err != nil {
		return nil, err
	}
	return plan{Plan: p, h: l.h}, nil
}

// plan starts a watched runtime.
type plan struct {
	ports.Plan
	h Hooks
}

// Start starts the runtime and wraps its standard streams.
func (p plan) Start(ctx context.Context, env []string) (ports.Process, error) {
	proc, err := p.Plan.Start(ctx, env)
	if err != nil {
		return nil, err
	}
	if p.h.Started != nil {
		p.h.Started(proc.Identity().Host)
	}
	return &process{Process: proc,
		in:  sender{WriteCloser: proc.Stdin(), h: p.h},
		out: &Reader{r: proc.Stdout(), h: p.h}}, nil
}

// process is a runtime whose standard streams are watched.
type process struct {
	ports.Process
	in  sender
	out *Reader
}

// Stdin is the runtime's standard input, its lines given to Hooks.Sent.
func (p *process) Stdin() io.WriteCloser { return p.in }

// Stdout is the runtime's standard output, its lines given to
// Hooks.Received while watched.
func (p *process) Stdout() io.Reader { return p.out }

// sender shows each line written to the runtime.
type sender struct {
	io.WriteCloser
	h Hooks
}

// Write shows b to Hooks.Sent and writes it.
func (s sender) Write(b []byte) (int, error) {
	if s.h.Sent != nil {
		s.h.Sent(b)
	}
	return s.WriteCloser.Write(b)
}

// Reader reads r and gives the lines read to Hooks.Received while
// watched; one goroutine reads it at a time.
type Reader struct {
	r    io.Reader
	h    Hooks
	line []byte
	skip bool // the current line is not given: begun unwatched, or too long
}

// NewReader is r, its lines given to h.Received while h.Watching reports
// true (what a watched runtime's standard output is).
func NewReader(r io.Reader, h Hooks) *Reader {
	if h.MaxLine <= 0 {
		h.MaxLine = DefaultMaxLine
	}
	return &Reader{r: r, h: h}
}

// Read reads from the wrapped reader and looks at what was read.
func (a *Reader) Read(b []byte) (int, error) {
	n, err := a.r.Read(b)
	a.look(b[:n])
	return n, err
}

// look splits chunk into lines.
func (a *Reader) look(chunk []byte) {
	if a.h.Received == nil {
		return
	}
	if a.h.Watching != nil && !a.h.Watching() {
		a.line = nil // nothing kept while nothing watches
		if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
			a.skip = i < len(chunk)-1 // a line begun unwatched is not given
		} else if len(chunk) > 0 {
			a.skip = true
		}
		return
	}
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		part := chunk
		if i >= 0 {
			part = chunk[:i]
		}
		if !a.skip {
			if len(a.line)+len(part) > a.h.MaxLine {
				a.skip, a.line = true, a.line[:0]
			} else {
				a.line = append(a.line, part...)
			}
		}
		if i < 0 {
			return
		}
		if !a.skip {
			a.h.Received(a.line)
		}
		a.line, a.skip = a.line[:0], false
		chunk = chunk[i+1:]
	}
}
