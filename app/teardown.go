package app

import (
	"context"
	"errors"
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

// teardownSteps is what a teardown needs from the session around the
// runtime: how the session ends through the protocol, what runs once the
// stream is drained, and where each step is reported.
type teardownSteps struct {
	// closeMethod is session/close or session/delete, "" for process
	// termination only; sessionID the session it ends.
	closeMethod, sessionID string
	// drained runs once standard output and the connection are closed and
	// the exit watcher is gone: the stream reports what it still held.
	drained func()
	// step reports one step (docs/behaviour.md#observability).
	step func(name string, start, end time.Time, err error)
}

// teardown runs the fixed order of docs/behaviour.md#teardown: session/close
// when advertised (bounded at half the remaining grace), close stdin, up to
// one second for the runtime to exit on its own, SIGTERM to the process
// group, the rest of the grace, SIGKILL to the whole tree as an
// unconditional backstop, close stdout and the connection, drain stderr and
// reap, release the pipes. The grace's end is deadline; every step is
// bounded on its own, so teardown ends however the runtime behaves. What
// survives is returned as a *domain.SurvivorsError (logged at Warn).
func (r *runtime) teardown(deadline time.Time, grace time.Duration, td teardownSteps) error {
	if r.proc == nil {
		return nil
	}
	remaining := func() time.Duration { return deadline.Sub(r.clock.Now()) }
	lap := r.lapper(td.step)

	// 1. Open requests: every runtime request is answered on receipt, so
	// none is held open here.
	// 2. End the session through the protocol when the runtime advertised how.
	if td.closeMethod != "" && td.sessionID != "" && !isDone(r.conn.Done()) && !isDone(r.conn.Broken()) {
		r.closeThroughProtocol(td.closeMethod, td.sessionID, remaining()/2)
		lap(ports.StepCloseSession, nil)
	}
	// 3. Close standard input: no more writes, and the runtime sees EOF.
	_ = r.conn.Close()
	_ = r.proc.Stdin().Close()
	lap(ports.StepCloseStdin, nil)
	// 4. A short window for the runtime to exit on its own (a runtime that
	// writes its transcript after answering gets to finish it).
	exited := r.waitExit(min(exitWindow, remaining()))
	lap(ports.StepExitWindow, nil)
	// 5. Graceful signal, then the rest of the grace.
	if !exited {
		if err := r.proc.Terminate(); err != nil {
			r.log.Debug("could not signal the agent process group", "error", err)
		}
		exited = r.waitExit(remaining())
		lap(ports.StepTerminate, nil)
	}
	if !exited {
		r.log.Warn("agent did not exit inside the graceful period and was force-terminated",
			"agent_pid", r.pid(), "stop_grace", grace)
	}
	// 6. Force-kill the whole tree, always.
	var errs []error
	err := r.proc.Kill()
	lap(ports.StepKill, err)
	if err != nil {
		var surv *domain.SurvivorsError
		if errors.As(err, &surv) {
			r.log.Warn("processes of the agent runtime survived teardown", "agent_pid", r.pid(), "survivors", len(surv.Survivors))
			errs = append(errs, surv)
		} else {
			r.log.Debug("could not kill the agent process tree", "error", err)
		}
	}
	// 7. Close standard output and the connection; report what the
	// stream still held.
	_ = r.proc.CloseStdout()
	r.conn.Wait()
	r.wg.Wait()
	td.drained()
	lap(ports.StepDrain, nil)
	// 8. Drain stderr and reap.
	select {
	case <-r.proc.Exited():
	case <-r.clock.After(reapBound):
		r.log.Warn("agent process was not reaped after the force kill", "agent_pid", r.pid())
	}
	lap(ports.StepReap, nil)
	// 9. Release the pipes.
	err = r.proc.Release()
	lap(ports.StepRelease, err)
	if err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// lapper returns a function that reports one teardown step from the end
// of the previous one (or the start of the teardown) to now
// (docs/behaviour.md#observability).
func (r *runtime) lapper(step func(name string, start, end time.Time, err error)) func(name string, err error) {
	prev := r.clock.Now()
	return func(name string, err error) {
		now := r.clock.Now()
		step(name, prev, now, err)
		prev = now
	}
}

// closeThroughProtocol sends session/close (or session/delete for a
// verification session), bounded. A failed close only means a process that
// is going away anyway notices a little later (Debug); a failed delete
// leaves the verification conversation stored on the runtime's side (Warn).
func (r *runtime) closeThroughProtocol(method, id string, bound time.Duration) {
	if bound <= 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	if err := r.client.EndSession(ctx, method, id); err != nil {
		if method == acpwire.MethodSessionDelete {
			r.log.Warn("session delete failed; the verification session stays stored by the runtime",
				"method", method, "session_id", id, "error", err)
			return
		}
		r.log.Debug("session end through the protocol failed", "method", method, "session_id", id, "error", err)
		return
	}
	r.log.Debug("session ended through the protocol", "method", method, "session_id", id)
}

// waitExit waits up to bound for the runtime to exit.
func (r *runtime) waitExit(bound time.Duration) bool {
	if bound <= 0 {
		return isDone(r.proc.Exited())
	}
	select {
	case <-r.proc.Exited():
		return true
	case <-r.clock.After(bound):
		return isDone(r.proc.Exited())
	}
}
