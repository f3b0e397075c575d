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
	"time"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
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

	notice func(error)
	lines  chan string
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// newStdinSteerer starts reading in; nil when off.
func newStdinSteerer(ctx context.Context, on bool, in io.Reader, target steerTarget, notice func(error)) *stdinSteerer {
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
		s.notice(err)
	}
}

// close stops steering and waits for the line in progress.
func (s *stdinSteerer) close() {
	if s == nil {
		return
	}
	s.cancel()
	s.wg.Wait()
}

// steerRefusedLine is the JSON line of a --steer-stdin line not sent
// (docs/behaviour.md#steering); warningLine a remark at start.
type steerRefusedLine struct {
	Type    string    `json:"type"`
	Time    time.Time `json:"time"`
	Message string    `json:"message"`
	Reason  string    `json:"reason,omitempty"`
}

// steerNotice says that a line of --steer-stdin was not sent, and why: on
// standard error for a person, a steer_refused line under --json
// (docs/behaviour.md#steering). The error's words, not its kind: a
// runtime that does not offer steering is not a missing program.
func (p *printer) steerNotice(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.json {
		_ = p.enc.Encode(steerRefusedLine{Type: "steer_refused", Time: time.Now().UTC(), Message: failureText(err), Reason: string(domain.ReasonOf(err))})
		p.buf.flush()
		return
	}
	p.clearStatus()
	p.endLine()
	p.buf.flush()
	fmt.Fprintln(p.errw, "acpdrive: steer not sent: "+failureText(err))
}

// msgSteerNotOffered is the warning at start of --steer-stdin on a
// runtime that does not offer steering.
const msgSteerNotOffered = "--steer-stdin: the runtime does not offer steering (it does not advertise _session/steering); lines read from standard input will not be sent"

// warnSteerNotOffered warns at start that --steer-stdin cannot steer this
// runtime: on standard error, a warning line under --json.
func (p *printer) warnSteerNotOffered() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.json {
		_ = p.enc.Encode(steerRefusedLine{Type: "warning", Time: time.Now().UTC(), Message: msgSteerNotOffered, Reason: string(domain.ReasonNotOffered)})
		p.buf.flush()
		return
	}
	p.clearStatus()
	p.buf.flush()
	fmt.Fprintln(p.errw, "acpdrive: warning: "+msgSteerNotOffered)
}

// advertisedText is probe's word for an advertised extension.
func advertisedText(on bool) string {
	if on {
		return "advertised (_session/steering)"
	}
	return "not advertised"
}
