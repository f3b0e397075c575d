package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
)

// Teardown bounds (docs/behaviour.md#teardown).
const (
	// exitWindow is how long the runtime gets to exit on its own once its
	// standard input is closed, before SIGTERM; never more than the
	// remaining grace.
	exitWindow = time.Second
	// reapBound bounds the wait for the runtime to be reaped after the
	// force kill.
	reapBound = 2 * time.Second
)

// Stop tears the session down in the fixed order of
// docs/behaviour.md#teardown, however far the start got: session/close
// when advertised (bounded at half the remaining grace), close stdin, up to
// one second for the runtime to exit on its own, SIGTERM to the process
// group, the rest of stop_grace_ms, SIGKILL to the whole tree as an
// unconditional backstop, close stdout and the connection, drain stderr and
// reap, release the pipes.
//
// Stop returns by ctx's deadline whatever the runtime does: when ctx ends
// first, Stop returns its error while the teardown goes on, on schedule,
// in a goroutine the session owns; a later Stop waits for it and returns
// its result. Stop is idempotent and safe for concurrent use. What survives
// the teardown is reported as a *domain.SurvivorsError (logged at Warn).
func (s *Session) Stop(ctx context.Context) error {
	s.stopOnce.Do(func() {
		close(s.stopping)
		grace := s.opts.Config.StopGrace
		if grace <= 0 {
			grace = domain.DefaultStopGrace
		}
		deadline := s.clock.Now().Add(grace)
		if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
			deadline = d
		}
		go func() {
			defer close(s.stopDone)
			began := s.clock.Now()
			s.stopErr = s.teardown(deadline)
			if s.proc != nil {
				s.obs.step(ports.StepTeardown, s.teardownWithin, began, s.clock.Now(), s.stopErr)
			}
			if !s.quiet {
				s.obs.end(s.clock.Now(), s.Capabilities(), s.stopErr)
			}
		}()
	})
	select {
	case <-s.stopDone:
		return s.stopErr
	case <-ctx.Done():
		return fmt.Errorf("app: stop did not finish before its context ended; teardown goes on: %w", ctx.Err())
	}
}

// teardown runs the order. The grace's end is deadline; every step is
// bounded on its own, so teardown ends however the runtime behaves.
func (s *Session) teardown(deadline time.Time) error {
	defer s.releaseBeacon() // after the runtime's tree is gone
	if s.proc == nil {
		return nil
	}
	remaining := func() time.Duration { return deadline.Sub(s.clock.Now()) }
	lap := s.lapper()

	// 1. Open requests: every runtime request is answered on receipt, so
	// none is held open here.
	// 2. End the session through the protocol when the runtime advertised how.
	if id := s.ID(); s.closeMethod != "" && id != "" && !isDone(s.conn.Done()) && !isDone(s.conn.Broken()) {
		s.closeThroughProtocol(s.closeMethod, id, remaining()/2)
		lap(ports.StepCloseSession, nil)
	}
	// 3. Close standard input: no more writes, and the runtime sees EOF.
	_ = s.conn.Close()
	_ = s.proc.Stdin().Close()
	lap(ports.StepCloseStdin, nil)
	// 4. A short window for the runtime to exit on its own (a runtime that
	// writes its transcript after answering gets to finish it).
	exited := s.waitExit(min(exitWindow, remaining()))
	lap(ports.StepExitWindow, nil)
	// 5. Graceful signal, then the rest of the grace.
	if !exited {
		if err := s.proc.Terminate(); err != nil {
			s.log.Debug("could not signal the agent process group", "error", err)
		}
		exited = s.waitExit(remaining())
		lap(ports.StepTerminate, nil)
	}
	if !exited {
		s.log.Warn("agent did not exit inside the graceful period and was force-terminated",
			"agent_pid", s.PID(), "stop_grace", s.opts.Config.StopGrace)
	}
	// 6. Force-kill the whole tree, always.
	var errs []error
	err := s.proc.Kill()
	lap(ports.StepKill, err)
	if err != nil {
		var surv *domain.SurvivorsError
		if errors.As(err, &surv) {
			s.log.Warn("processes of the agent runtime survived teardown", "agent_pid", s.PID(), "survivors", len(surv.Survivors))
			errs = append(errs, surv)
		} else {
			s.log.Debug("could not kill the agent process tree", "error", err)
		}
	}
	// 7. Close standard output and the connection; report what the
	// stream still held.
	_ = s.proc.CloseStdout()
	s.conn.Wait()
	s.wg.Wait()
	s.stream.flush()
	lap(ports.StepDrain, nil)
	// 8. Drain stderr and reap.
	select {
	case <-s.proc.Exited():
	case <-s.clock.After(reapBound):
		s.log.Warn("agent process was not reaped after the force kill", "agent_pid", s.PID())
	}
	lap(ports.StepReap, nil)
	// 9. Release the pipes.
	err = s.proc.Release()
	lap(ports.StepRelease, err)
	if err != nil {
		errs = append(errs, err)
	}
	s.meter.release()
	return errors.Join(errs...)
}

// lapper returns a function that reports one teardown step from the end
// of the previous one (or the start of the teardown) to now
// (docs/behaviour.md#observability).
func (s *Session) lapper() func(name string, err error) {
	prev := s.clock.Now()
	return func(name string, err error) {
		now := s.clock.Now()
		s.obs.step(name, ports.StepTeardown, prev, now, err)
		prev = now
	}
}

// closeThroughProtocol sends session/close (or session/delete for a
// verification session), bounded. A failed close only means a process that
// is going away anyway notices a little later (Debug); a failed delete
// leaves the verification conversation stored on the runtime's side (Warn).
func (s *Session) closeThroughProtocol(method, id string, bound time.Duration) {
	if bound <= 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	if err := s.client.EndSession(ctx, method, id); err != nil {
		if method == acpwire.MethodSessionDelete {
			s.log.Warn("session delete failed; the verification session stays stored by the runtime",
				"method", method, "session_id", id, "error", err)
			return
		}
		s.log.Debug("session end through the protocol failed", "method", method, "session_id", id, "error", err)
		return
	}
	s.log.Debug("session ended through the protocol", "method", method, "session_id", id)
}

// waitExit waits up to bound for the runtime to exit.
func (s *Session) waitExit(bound time.Duration) bool {
	if bound <= 0 {
		return isDone(s.proc.Exited())
	}
	select {
	case <-s.proc.Exited():
		return true
	case <-s.clock.After(bound):
		return isDone(s.proc.Exited())
	}
}
