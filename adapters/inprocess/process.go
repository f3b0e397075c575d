package inprocess

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/adapters/internal/procio"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/refagent"
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
)

// signalKilled is the ExitStatus.Signal of an agent ended by Kill, the word
// a local process killed by SIGKILL reports.
const signalKilled = "killed"

// survivorName names the in-process agent in a *domain.SurvivorsError.
const survivorName = "reference agent (in-process)"

// process is one in-process reference agent. It implements ports.Process;
// the test's ends of the pipes and the exit value are procio's (Exited is
// closed once the agent has returned and its ends are closed).
type process struct {
	*procio.Streams

	// pipes holds the agent's ends too, closed when it returns (as a
	// process's exit closes its descriptors) or when Kill ends it.
	pipes         *procio.Pipes
	agentEndsOnce sync.Once

	term   chan struct{} // one pending SIGTERM, as signal delivery merges them
	cancel context.CancelFunc

	mu     sync.Mutex
	ended  bool
	killed bool

	releaseOnce sync.Once
	releaseErr  error
}

var _ ports.Process = (*process)(nil)

// start makes the pipes and starts the agent's goroutine and the stderr
// copier.
func start(args []string) (*process, error) {
	pipes, err := procio.OpenPipes()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &process{
		Streams: pipes.Streams(nil),
		pipes:   pipes,
		term:    make(chan struct{}, 1),
		cancel:  cancel,
	}
	opts := refagent.ServeOptions{
		Args:      append([]string(nil), args...),
		Stdin:     pipes.StdinR,
		Stdout:    pipes.StdoutW,
		Stderr:    pipes.StderrW,
		Terminate: p.term,
	}
	go p.run(ctx, opts)
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
	st := domain.ExitStatus{Exited: true, Code: code}
	p.mu.Lock()
	p.ended = true
	if p.killed {
		st = domain.ExitStatus{Exited: true, Code: -1, Signal: signalKilled}
	}
	p.mu.Unlock()
	p.SetExit(st)
}

func (p *process) closeAgentEnds() { p.agentEndsOnce.Do(p.pipes.CloseChildEnds) }

// Identity has PID 0: no local process exists for an in-process agent.
func (p *process) Identity() ports.Identity { return ports.Identity{} }

// Terminate delivers the in-process equivalent of SIGTERM: the agent
// returns 143 (reported as exit code 143, as a real reference agent exits
// on SIGTERM) unless it ignores SIGTERM (--ignore-sigterm, the scenarios
// ignore-sigterm and stubborn, or a script's ignoreSigterm), in which case it
// notes the signal on stderr and goes on. A second Terminate while one is
// still pending merges with it. An agent that has ended is not an error.
func (p *process) Terminate() error {
	select {
	case <-p.Exited():
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
	case <-p.Exited():
		return nil
	case <-t.C:
		return &domain.SurvivorsError{Survivors: []domain.Survivor{{PID: 0, Name: survivorName}}}
	}
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
	errs := []error{p.CloseStdin()}
	t := time.NewTimer(exitBound)
	select {
	case <-p.Exited():
	case <-t.C:
		errs = append(errs, errors.New("the agent had not exited at release; ended it"))
		if err := p.Kill(); err != nil {
			errs = append(errs, err)
		}
	}
	t.Stop()
	errs = append(errs, p.DrainStderr(stderrDrainBound), p.CloseReadEnds())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("inproc: %w", err)
	}
	return nil
}
