package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/acpdrive/acpdrive/app"
)

// registerSteerFlag defines --steer-stdin (docs/behaviour.md#steering).
func registerSteerFlag(fs *flag.FlagSet, on *bool) {
	fs.BoolVar(on, "steer-stdin", false, "send each line read from standard input while a turn runs into that turn (_session/steering, where the runtime advertises it); a line between turns is refused with a notice")
}

// checkSteerStdin refuses --steer-stdin beside -f -: standard input is read once.
func checkSteerStdin(on bool, promptFiles []string) error {
	if on && slices.Contains(promptFiles, "-") {
		return errors.New("--steer-stdin and -f - both read standard input")
	}
	return nil
}

// steerTarget is what a steer line goes to: the session.
type steerTarget interface {
	Steer(ctx context.Context, text string, mode ...app.SteerMode) error
}

// stdinSteerer sends each line of its input as a steer to the current
// session; a refused line is a notice on stderr. Its consumer goroutine is
// awaited by close; the reader goroutine ends with its input (a terminal's
// standard input, unread, ends with the process).
type stdinSteerer struct {
	mu     sync.Mutex
	target steerTarget

	notice func(string)
	lines  chan string
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// newStdinSteerer starts reading in; nil when off.
func newStdinSteerer(ctx context.Context, on bool, in io.Reader, target steerTarget, notice func(string)) *stdinSteerer {
	if !on {
		return nil
	}
	s := &stdinSteerer{target: target, notice: notice, lines: make(chan string)}
	s.ctx, s.cancel = context.WithCancel(ctx)
	go func() { // ends with in; see the type's comment
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			select {
			case s.lines <- sc.Text():
			case <-s.ctx.Done():
				return
			}
		}
	}()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			select {
			case line := <-s.lines:
				s.steer(line)
			case <-s.ctx.Done():
				return
			}
		}
	}()
	return s
}

func (s *stdinSteerer) steer(line string) {
	if line == "" {
		return
	}
	s.mu.Lock()
	target := s.target
	s.mu.Unlock()
	if err := target.Steer(s.ctx, line); err != nil && s.ctx.Err() == nil {
		s.notice(fmt.Sprintf("steer not sent: %v", err))
	}
}

// setSession makes sess the session lines go to (a retry's new process).
func (s *stdinSteerer) setSession(sess *app.Session) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.target = sess
	s.mu.Unlock()
}

// close stops steering and waits for the line in progress.
func (s *stdinSteerer) close() {
	if s == nil {
		return
	}
	s.cancel()
	s.wg.Wait()
}

// steerNotice says on standard error that a line of --steer-stdin was not
// sent, and why (docs/behaviour.md#steering).
func (p *printer) steerNotice(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.json {
		p.clearStatus()
		p.endLine()
		p.buf.flush()
	}
	fmt.Fprintln(p.errw, "acpdrive: "+msg)
}

// advertisedText is probe's word for an advertised extension.
func advertisedText(on bool) string {
	if on {
		return "advertised (_session/steering)"
	}
	return "not advertised"
}
