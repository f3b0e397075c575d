package app

import (
	"context"
	"time"

	"github.com/acpdrive/acpdrive/protocol/acpwire"
)

// reapBound bounds the wait for the runtime to be reaped after SIGKILL.
const reapBound = 2 * time.Second

// Stop tears the session down in the fixed order of the specification
// (reference-tables §8), however far the start got: session/close when
// advertised (bounded at half the remaining grace), SIGTERM to the process
// group, close stdin, wait for the exit within stop_grace_ms and ctx,
// SIGKILL to the group as an unconditional backstop, close stdout and the
// connection, drain stderr and reap, release the pipes. It is idempotent and
// waits for every goroutine the session started.
func (s *Session) Stop(ctx context.Context) error {
	s.stopOnce.Do(func() { s.stopErr = s.teardown(ctx) })
	return s.stopErr
}

func (s *Session) teardown(ctx context.Context) error {
	close(s.stopping)
	if s.proc == nil {
		return nil
	}
	grace := s.opts.Config.StopGrace
	deadline := s.opts.Clock.Now().Add(grace)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	remaining := func() time.Duration { return deadline.Sub(s.opts.Clock.Now()) }

	// 1. Open requests: every runtime request is answered on receipt, so
	// none is held open here.
	// 2. End the session through the protocol when the runtime advertised how.
	if id := s.ID(); s.closeMethod != "" && id != "" && !isDone(s.conn.Done()) {
		s.closeThroughProtocol(ctx, s.closeMethod, id, remaining()/2)
	}
	// 3. Graceful signal to the process group.
	if err := s.proc.Terminate(); err != nil {
		s.log.Debug("could not signal the agent process group", "error", err)
	}
	// 4. Close standard input.
	s.conn.Close()
	_ = s.proc.Stdin().Close()
	// 5. Wait for the exit, bounded by the grace and ctx.
	exited := s.waitExit(ctx, remaining())
	// 6. Force-kill the group, always.
	if !exited {
		s.log.Warn("agent did not exit inside the graceful period and was force-terminated",
			"agent_pid", s.proc.PID(), "stop_grace", grace)
	}
	if err := s.proc.Kill(); err != nil {
		s.log.Debug("could not kill the agent process group", "error", err)
	}
	// 7. Close standard output and the connection.
	_ = s.proc.CloseStdout()
	s.conn.Wait()
	s.wg.Wait()
	// 8. Drain stderr and reap.
	select {
	case <-s.proc.Exited():
	case <-time.After(reapBound):
		s.log.Warn("agent process was not reaped after the force kill", "agent_pid", s.proc.PID())
	}
	// 9. Release the pipes.
	return s.proc.Release()
}

// closeThroughProtocol sends session/close (or session/delete for a
// verification session), bounded. A failed close only means a process that
// is going away anyway notices a little later (Debug); a failed delete
// leaves the verification conversation stored on the runtime's side (Warn).
func (s *Session) closeThroughProtocol(ctx context.Context, method, id string, bound time.Duration) {
	if bound <= 0 {
		return
	}
	callCtx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	if _, err := s.conn.Call(callCtx, method, acpwire.SessionIDParams{SessionID: id}); err != nil {
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

func (s *Session) waitExit(ctx context.Context, bound time.Duration) bool {
	if bound <= 0 {
		return isDone(s.proc.Exited())
	}
	select {
	case <-s.proc.Exited():
		return true
	case <-ctx.Done():
		return isDone(s.proc.Exited())
	case <-s.opts.Clock.After(bound):
		return isDone(s.proc.Exited())
	}
}
