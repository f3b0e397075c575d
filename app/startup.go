package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

// exitSettle is how long a start-up call that saw the connection end waits
// for the process to be reaped, to tell an exit from a closed stream.
const exitSettle = time.Second

// startupCall sends one start-up request bounded by timeout and maps every
// failure onto the start-up error table (reference-tables §3).
func (s *Session) startupCall(ctx context.Context, method string, params, result any, timeout time.Duration) error {
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	raw, err := s.conn.Call(callCtx, method, params)
	if err == nil {
		if result != nil {
			if derr := json.Unmarshal(raw, result); derr != nil {
				return domain.WrapError(domain.KindResponseError, fmt.Sprintf("%s response did not decode", method), derr)
			}
		}
		return nil
	}
	return s.startupError(ctx, method, err)
}

func (s *Session) startupError(ctx context.Context, method string, err error) error {
	var rpcErr *jsonrpc.Error
	switch {
	case errors.As(err, &rpcErr):
		return domain.WrapError(domain.KindResponseError,
			fmt.Sprintf("%s error %d: %s", method, rpcErr.Code, rpcErr.Message), rpcErr)
	case ctx.Err() != nil:
		return domain.WrapError(domain.KindTurnCancelled, "session start cancelled", ctx.Err())
	case errors.Is(err, context.DeadlineExceeded):
		return domain.WrapError(domain.KindResponseTimeout, domain.MsgTimedOut, fmt.Errorf("%s: %w", method, err))
	default:
		return s.connectionLostError(err)
	}
}

// connectionLostError builds the early exit report when the process has
// exited, and the plain message when it is still alive.
func (s *Session) connectionLostError(cause error) error {
	select {
	case <-s.proc.Exited():
	case <-s.opts.Clock.After(exitSettle):
		return domain.WrapError(domain.KindPortExit, domain.MsgConnEndedBeforeResponding, cause)
	}
	tail, truncated := s.proc.StderrTail()
	return domain.NewError(domain.KindPortExit, domain.EarlyExitReport(s.proc.ExitStatus(), tail, truncated))
}
