package inproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/refagent"
)

// Contract messages for a start that fails (as the local launcher words them).
const (
	msgStdinPipeFailed  = "failed to create stdin pipe"
	msgStdoutPipeFailed = "failed to create stdout pipe"
	msgStderrPipeFailed = "failed to create stderr pipe"
)

// Bounds of teardown.
const (
	// killBound is how long Kill waits for the agent to return once its
	// context is cancelled and its pipes are closed.
	killBound = 2 * time.Second
	// exitBound is how long Release waits for an agent that was not killed
	// before it ends it by force.
	exitBound = time.Second
	// stderrDrainBound is how long Release waits for standard error to
	// reach its end before closing it.
	stderrDrainBound = time.Second
	// stderrSettle bounds StderrTail's wait for the end of standard error
	// once the agent has exited.
	stderrSettle = 250 * time.Millisecond
)

// signalKilled is the ExitStatus.Signal of an agent ended by Kill, the word
// a local process killed by SIGKILL reports.
const signalKilled = "killed"

// survivorName names the in-process agent in a *domain.SurvivorsError.
const survivorName = "reference agent (in-process)"

// process is one in-process reference agent. It implements ports.Process.
type process struct {
	// The test's ends of the pipes.
	stdin  *stdinPipe
	stdout *os.File
	stderr *os.File
	// The agent's ends, closed when it returns (as a process's exit closes
	// its descriptors) or when Kill ends it.
	agentIn, agentOut, agentErr *os.File
	agentEndsOnce               sync.Once

	tail domain.TailBuffer

	term   chan struct{} // one pending SIGTERM, as signal delivery merges them
	cancel context.CancelFunc

	exited     chan struct{} // closed once the agent has returned and its ends are closed
	copierDone chan struct{} // closed when the stderr copier returns

	mu     sync.Mutex
	ended  bool
	killed bool
	status domain.ExitStatus

	stdoutOnce  sync.Once
	stdoutErr   error
	stderrOnce  sync.Once
	stderrErr   error
	releaseOnce sync.Once
	releaseErr  error
}

var _ ports.Process = (*process)(nil)

// start makes the pipes and starts the agent's goroutine and the stderr
// copier.
func start(args []string) (*process, error) {
	var opened []*os.File
	pipe := func(msg string) (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err != nil {
			for _, f := range opened {
				_ = f.Close()
			}
			return nil, nil, domain.WrapError(domain.KindPortExit, msg, err)
		}
		opened = append(opened, r, w)
		return r, w, nil
	}
	inR, inW, err := pipe(msgStdinPipeFailed)
	if err != nil {
		return nil, err
	}
	outR, outW, err := pipe(msgStdoutPipeFailed)
	if err != nil {
		return nil, err
	}
	errR, errW, err := pipe(msgStderrPipeFailed)
	if err != nil {
		return nil, err
	}

	ctx, cancel := context.WithCancel(context.Background())
	p := &process{
		stdin:      &stdinPipe{f: inW},
		stdout:     outR,
		stderr:     errR,
		agentIn:    inR,
		agentOut:   outW,
		agentErr:   errW,
		term:       make(chan struct{}, 1),
		cancel:     cancel,
		exited:     make(chan struct{}),
		copierDone: make(chan struct{}),
	}
	opts := refagent.ServeOptions{
		Args:      append([]string(nil), args...),
		Stdin:     inR,
		Stdout:    outW,
		Stderr:    errW,
		Terminate: p.term,
	}
	go p.run(ctx, opts)
	go p.copyStderr()
	return p, nil
}

// run serves the agent until it returns, then records how it ended.
func (p *process) run(ctx context.Context, opts refagent.ServeOptions) {
	code := refagent.Serve(ctx, opts)
	// The end of a process closes its descriptors: the reader of stdout
	// and stderr sees their end, and the agent's own goroutine still
	// reading stdin returns.
	p.closeAgentEnds()
	p.cancel()
	p.mu.Lock()
	p.ended = true
	if p.killed {
		p.status = domain.ExitStatus{Exited: true, Code: -1, Signal: signalKilled}
	} else {
		p.status = domain.ExitStatus{Exited: true, Code: code}
	}
	p.mu.Unlock()
	close(p.exited)
}

func (p *process) closeAgentEnds() {
	p.agentEndsOnce.Do(func() {
		_ = p.agentIn.Close()
		_ = p.agentOut.Close()
		_ = p.agentErr.Close()
	})
}

// copyStderr keeps the tail of standard error until its end or until
// Release closes the read end.
func (p *process) copyStderr() {
	defer close(p.copierDone)
	_, _ = io.Copy(&p.tail, p.stderr)
}

// Identity has PID 0: no local process exists for an in-process agent.
func (p *process) Identity() ports.Identity { return ports.Identity{} }

// Stdin is the agent's standard input: an *os.File pipe, so it also has
// SetWriteDeadline. Closing it more than once is harmless.
func (p *process) Stdin() io.WriteCloser { return p.stdin }

// Stdout is the read end of the agent's standard output.
func (p *process) Stdout() io.Reader { return p.stdout }

// Terminate delivers the in-process equivalent of SIGTERM: the agent
// returns 143 (reported as exit code 143, as a real reference agent exits
// on SIGTERM) unless it ignores SIGTERM (--ignore-sigterm, the scenarios
// ignore-sigterm and stubborn, or a script's ignoreSigterm), in which case it
// notes the signal on stderr and goes on. A second Terminate while one is
// still pending merges with it. An agent that has ended is not an error.
func (p *process) Terminate() error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	select {
	case p.term <- struct{}{}:
	default:
	}
	return nil
}

// Kill ends the agent unconditionally, as SIGKILL would: it cancels the
// agent's context and closes the agent's ends of all three pipes, so every
// read and write it has in progress fails at once, then waits up to
// killBound for its goroutine to return. An agent still running killed
// reports ExitStatus{Code: -1, Signal: "killed"}. If the goroutine has not
// returned by the bound, the error is a *domain.SurvivorsError naming the
// in-process agent (PID 0). Killing an ended agent does nothing.
func (p *process) Kill() error {
	p.mu.Lock()
	if !p.ended {
		p.killed = true
	}
	p.mu.Unlock()
	p.cancel()
	p.closeAgentEnds()
	t := time.NewTimer(killBound)
	defer t.Stop()
	select {
	case <-p.exited:
		return nil
	case <-t.C:
		return &domain.SurvivorsError{Survivors: []domain.Survivor{{PID: 0, Name: survivorName}}}
	}
}

// Exited is closed once the agent has returned and its pipe ends are closed.
func (p *process) Exited() <-chan struct{} { return p.exited }

// Exit reports how the agent ended: its return code (0, a scripted exit's
// code, 143 after Terminate, 2 on a usage error or a refused spawn), or
// code -1 with Signal "killed" after Kill. Before Exited is closed it is the
// zero ExitStatus.
func (p *process) Exit() domain.ExitStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.status
}

// CloseStdout closes the read end of standard output, unblocking a pending
// read. Later calls return the first call's result.
func (p *process) CloseStdout() error {
	p.stdoutOnce.Do(func() { p.stdoutErr = p.stdout.Close() })
	return p.stdoutErr
}

func (p *process) closeStderr() error {
	p.stderrOnce.Do(func() { p.stderrErr = p.stderr.Close() })
	return p.stderrErr
}

// StderrTail returns the last bytes (at most 8 KiB) the agent wrote to
// standard error and whether earlier bytes were cut off. Once the agent has
// exited it first waits up to stderrSettle for the copier to reach the end.
func (p *process) StderrTail() ([]byte, bool) {
	select {
	case <-p.exited:
		t := time.NewTimer(stderrSettle)
		select {
		case <-p.copierDone:
		case <-t.C:
		}
		t.Stop()
	default:
	}
	return p.tail.Tail()
}

// Release closes standard input, waits up to exitBound for the agent to
// return (ending it as Kill does if it has not, which is reported as an
// error), drains standard error for up to stderrDrainBound and closes every
// stream. Once it returns, every goroutine this process started has
// returned, unless the error says the agent survived. Later calls return
// the first call's result.
func (p *process) Release() error {
	p.releaseOnce.Do(func() { p.releaseErr = p.release() })
	return p.releaseErr
}

func (p *process) release() error {
	var errs []error
	if err := p.stdin.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
		errs = append(errs, fmt.Errorf("inproc: close stdin: %w", err))
	}

	t := time.NewTimer(exitBound)
	select {
	case <-p.exited:
	case <-t.C:
		errs = append(errs, errors.New("inproc: the agent had not exited at release; ended it"))
		if err := p.Kill(); err != nil {
			errs = append(errs, err)
		}
	}
	t.Stop()

	d := time.NewTimer(stderrDrainBound)
	select {
	case <-p.copierDone:
	case <-d.C:
		_ = p.closeStderr()
		<-p.copierDone
	}
	d.Stop()

	if err := p.CloseStdout(); err != nil && !errors.Is(err, os.ErrClosed) {
		errs = append(errs, fmt.Errorf("inproc: close stdout: %w", err))
	}
	if err := p.closeStderr(); err != nil && !errors.Is(err, os.ErrClosed) {
		errs = append(errs, fmt.Errorf("inproc: close stderr: %w", err))
	}
	return errors.Join(errs...)
}

// stdinPipe is the write end of the agent's standard input with an
// idempotent Close.
type stdinPipe struct {
	f    *os.File
	once sync.Once
	err  error
}

// Write writes to the agent's standard input.
func (s *stdinPipe) Write(b []byte) (int, error) { return s.f.Write(b) }

// SetWriteDeadline bounds the next writes, so an agent that stops reading
// cannot block a writer forever.
func (s *stdinPipe) SetWriteDeadline(t time.Time) error { return s.f.SetWriteDeadline(t) }

// Close closes the write end once; later calls return the first result.
func (s *stdinPipe) Close() error {
	s.once.Do(func() { s.err = s.f.Close() })
	return s.err
}
