package app

import (
	"context"
	"errors"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpclient"
)

// exitSettle is how long a start-up call that saw the connection end waits
// for the process to be reaped, to tell an exit from a closed stream.
const exitSettle = time.Second

// Start-up messages of this package.
const (
	msgStartCancelled = "session start cancelled"
	msgStartFailed    = "failed to start subprocess"
)

// startupError maps a failed start-up call onto the start-up error table
// (docs/behaviour.md#start-up): the runtime's error answer is
// response_error with the operator's message, the caller's cancellation
// turn_cancelled, the call's own bound response_timeout, and a lost
// connection port_exit (with the early exit report when the process
// exited).
func (s *Session) startupError(ctx context.Context, method string, err error) error {
	return s.conn.startupError(ctx, method, err)
}

// startupError is Session.startupError for a call of the connection's own
// (initialize).
func (c *connection) startupError(ctx context.Context, method string, err error) error {
	var callErr *acpclient.CallError
	var decodeErr *acpclient.DecodeError
	switch {
	case errors.As(err, &callErr):
		return domain.WrapError(domain.KindResponseError, callErr.Error(), callErr)
	case errors.As(err, &decodeErr):
		return domain.WrapError(domain.KindResponseError, method+" response did not decode", decodeErr)
	case ctx.Err() != nil:
		if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
			// A bound of the caller's own, such as the verification bound
			// (which wraps context.DeadlineExceeded, so errors.Is cannot
			// tell it from ctx.Err()).
			return cause
		}
		return domain.WrapError(domain.KindTurnCancelled, msgStartCancelled, ctx.Err())
	case errors.Is(err, context.DeadlineExceeded):
		return domain.WrapError(domain.KindResponseTimeout, domain.MsgTimedOut, errors.Join(errors.New(method), err))
	default:
		return c.connectionLostError(err)
	}
}

// connectionLostError builds the early exit report when the process has
// exited, and the plain message when it is still alive.
func (c *connection) connectionLostError(cause error) error {
	proc := c.rt.proc
	select {
	case <-proc.Exited():
	case <-c.clock.After(exitSettle):
		return domain.WrapError(domain.KindPortExit, domain.MsgConnEndedBeforeResponding, cause)
	}
	tail, truncated := proc.StderrTail()
	exit := proc.Exit()
	err := domain.NewError(domain.KindPortExit, domain.EarlyExitReport(exit.String(), tail, truncated))
	if exit.Unreachable {
		err.Cause = domain.ErrHostUnreachable
	}
	return err
}
