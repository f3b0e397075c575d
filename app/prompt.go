package app

import (
	"context"
	"errors"
	"log/slog"
	"os"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpclient"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

// promptRequest is one prompt in the turn engine's terms.
type promptRequest struct {
	sessionID string
	text      string
	meta      map[string]string // the observers' _meta pairs
}

// prompter is the protocol side of a turn: how a prompt reaches the
// runtime, how a turn is cancelled, and how the connection's state reads
// in domain terms. The turn engine (turn.go) knows nothing else of the
// wire, so a protocol whose turn ends otherwise than by the prompt's
// response (a state change, in ACP v2) is another prompter, not another
// engine.
type prompter interface {
	// send hands the prompt over; ctx bounds the hand-over only.
	send(ctx context.Context, req promptRequest) (promptCall, error)
	// cancel asks the runtime to end the session's running turn.
	cancel(ctx context.Context, sessionID string) error
	// classify maps an error of send; waitForEnd says that it is a lost
	// connection only if the stream ends soon (a failed write).
	classify(err error) (res domain.TurnResult, waitForEnd bool)
	// lostConnection is the result of a turn whose connection ended.
	lostConnection(cause error) domain.TurnResult
	// broken is closed once a write missed its bound; writeErr says why.
	broken() <-chan struct{}
	writeErr() error
	// done is closed once the runtime's stream has ended.
	done() <-chan struct{}
}

// promptCall is a prompt the runtime took.
type promptCall interface {
	// Done is closed once the turn's end arrived (or never will).
	Done() <-chan struct{}
	// Answered reports whether the turn's end arrived.
	Answered() bool
	// result maps the turn's end onto the disposition table
	// (docs/behaviour.md#turn-disposition).
	result() domain.TurnResult
	// settled reads an end that arrived after this side decided the turn.
	settled()
	// forget stops waiting for the end.
	forget()
}

// promptHandle lets a turn hold its promptCall in an atomic pointer.
type promptHandle struct{ promptCall }

// v1Prompter is ACP v1's prompter: session/prompt, whose response carries
// the stop reason, and the session/cancel notification.
type v1Prompter struct {
	rt  *runtime
	log *slog.Logger
	// kids are the session's children: cancelling the turn cancels
	// those still working (docs/behaviour.md#sessions-as-resources-and-child-sessions).
	kids *children
}

func (p v1Prompter) send(ctx context.Context, req promptRequest) (promptCall, error) {
	pr, err := p.write(ctx, req)
	if err != nil {
		return nil, err
	}
	return v1Call{p: pr, rt: p.rt, log: p.log}, nil
}

// write sends session/prompt with the prompt's text (the same request on
// both protocol versions).
func (p v1Prompter) write(ctx context.Context, req promptRequest) (*acpclient.Prompt, error) {
	return p.rt.client.SendPrompt(ctx, acpwire.PromptRequest{
		SessionID: req.sessionID,
		Prompt:    []acpwire.ContentBlock{{Type: "text", Text: req.text}},
		Meta:      req.meta,
	})
}

func (p v1Prompter) cancel(ctx context.Context, sessionID string) error {
	err := p.rt.client.Cancel(ctx, sessionID)
	for _, id := range p.kids.working() {
		p.log.Debug("cancelling a working child session with its parent's turn", "child_session_id", id)
		_ = p.rt.client.Cancel(ctx, id)
	}
	return err
}

func (p v1Prompter) classify(err error) (domain.TurnResult, bool) {
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		// The runtime did not take the prompt within read_timeout_ms.
		return domain.FailedResult(domain.WrapError(domain.KindResponseTimeout, domain.MsgTimedOut, err)), false
	case errors.Is(err, jsonrpc.ErrWriteFailed):
		return domain.TurnResult{}, true
	}
	return p.rt.lostConnection(err), false
}

func (p v1Prompter) lostConnection(cause error) domain.TurnResult { return p.rt.lostConnection(cause) }
func (p v1Prompter) broken() <-chan struct{}                      { return p.rt.conn.Broken() }
func (p v1Prompter) writeErr() error                              { return p.rt.conn.WriteErr() }
func (p v1Prompter) done() <-chan struct{}                        { return p.rt.conn.Done() }

// v1Call is a session/prompt in flight.
type v1Call struct {
	p   *acpclient.Prompt
	rt  *runtime
	log *slog.Logger
}

func (c v1Call) Done() <-chan struct{} { return c.p.Done() }
func (c v1Call) Answered() bool        { return c.p.Answered() }
func (c v1Call) forget()               { c.rt.client.Forget(c.p) }

func (c v1Call) settled() {
	if _, err := c.p.Result(); err != nil && !isCallError(err) {
		c.log.Debug("connection ended while the turn settled", "error", err)
	}
}

// result reads the stop reason of the prompt's answer: a JSON-RPC error,
// an answer with both a result and an error, and a lost connection are
// checked first.
func (c v1Call) result() domain.TurnResult {
	resp, err := c.p.Result()
	var callErr *acpclient.CallError
	var decodeErr *acpclient.DecodeError
	switch {
	case errors.As(err, &callErr):
		return domain.FailedResult(domain.WrapError(domain.KindResponseError, callErr.Error(), callErr))
	case errors.Is(err, jsonrpc.ErrAmbiguousResponse):
		return domain.FailedResult(domain.WrapError(domain.KindTurnOutcomeUnknown, domain.MsgPromptAmbiguous, err))
	case errors.As(err, &decodeErr):
		return domain.FailedResult(domain.WrapError(domain.KindTurnOutcomeUnknown, domain.MsgPromptUndecodable, err))
	case err != nil:
		return c.rt.lostConnection(err)
	case resp.StopReason == "":
		return domain.FailedResult(domain.NewError(domain.KindTurnOutcomeUnknown, domain.MsgPromptUndecodable))
	}
	res := domain.Disposition(resp.StopReason, domain.OverrideNone, "")
	if f := ingestWireUsage(decodeWireUsage(resp.Usage, c.log), domain.SourcePromptResult, c.log); f != nil {
		res.Usage, res.Source = &f.usage, f.source
		res.Breakdown = modelBreakdown(resp.Meta)
	}
	return res
}

func isCallError(err error) bool {
	var ce *acpclient.CallError
	return errors.As(err, &ce)
}
