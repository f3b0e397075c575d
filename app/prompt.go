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

// promptWire is what every version's prompter shares: the session/prompt
// request (the same on both versions), session/cancel (a notification on
// both), and how the connection's state reads in domain terms.
type promptWire struct {
	rt  *runtime
	log *slog.Logger
	// kids are the session's children: cancelling the turn cancels
	// those still working (docs/behaviour.md#sessions-as-resources-and-child-sessions).
	kids *children
}

// write sends session/prompt with the prompt's text.
func (p promptWire) write(ctx context.Context, req promptRequest) (*acpclient.Prompt, error) {
	return p.rt.client.SendPrompt(ctx, acpwire.PromptRequest{
		SessionID: req.sessionID,
		Prompt:    []acpwire.ContentBlock{{Type: "text", Text: req.text}},
		Meta:      req.meta,
	})
}

// cancel sends session/cancel for the session, then for each child that
// was working when the cancel was decided. The children are read before
// the parent's cancel is written: the runtime may report a child idle in
// answer to it, and a child working when the turn was cancelled is
// cancelled with it (docs/behaviour.md#child-sessions).
func (p promptWire) cancel(ctx context.Context, sessionID string) error {
	working := p.kids.working()
	err := p.rt.client.Cancel(ctx, sessionID)
	for _, id := range working {
		p.log.Debug("cancelling a working child session with its parent's turn", "child_session_id", id)
		_ = p.rt.client.Cancel(ctx, id)
	}
	return err
}

func (p promptWire) classify(err error) (domain.TurnResult, bool) {
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		// The runtime did not take the prompt within read_timeout_ms.
		return domain.FailedResult(domain.WrapError(domain.KindResponseTimeout, domain.MsgTimedOut, err)), false
	case errors.Is(err, jsonrpc.ErrWriteFailed):
		return domain.TurnResult{}, true
	}
	return p.rt.lostConnection(err), false
}

func (p promptWire) lostConnection(cause error) domain.TurnResult { return p.rt.lostConnection(cause) }
func (p promptWire) broken() <-chan struct{}                      { return p.rt.conn.Broken() }
func (p promptWire) writeErr() error                              { return p.rt.conn.WriteErr() }
func (p promptWire) done() <-chan struct{}                        { return p.rt.conn.Done() }

func isCallError(err error) bool {
	var ce *acpclient.CallError
	return errors.As(err, &ce)
}
