package app

import (
	"context"
	"errors"
	"log/slog"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpclient"
	"github.com/acpdrive/acpdrive/protocol/dialect"
	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

// answerPrompter is the prompter of a dialect whose turn ends with the
// session/prompt answer (dialect.EndsWithAnswer): the answer carries the
// turn's end; cancelling is the session/cancel notification.
type answerPrompter struct {
	promptWire
	d dialect.Dialect
}

func (p answerPrompter) send(ctx context.Context, req promptRequest) (promptCall, error) {
	pr, err := p.write(ctx, req)
	if err != nil {
		return nil, err
	}
	return answerCall{p: pr, d: p.d, rt: p.rt, log: p.log}, nil
}

// answerCall is a session/prompt in flight whose answer ends the turn.
type answerCall struct {
	p   *acpclient.Prompt
	d   dialect.Dialect
	rt  *runtime
	log *slog.Logger
}

func (c answerCall) Done() <-chan struct{} { return c.p.Done() }
func (c answerCall) Answered() bool        { return c.p.Answered() }
func (c answerCall) forget()               { c.rt.client.Forget(c.p) }

func (c answerCall) settled() {
	if _, err := c.p.Answer(); err != nil && !isCallError(err) {
		c.log.Debug("connection ended while the turn settled", "error", err)
	}
}

// result reads the turn's end from the prompt's answer: a JSON-RPC error,
// an answer with both a result and an error, and a lost connection are
// checked first.
func (c answerCall) result() domain.TurnResult {
	raw, err := c.p.Answer()
	var end *dialect.TurnEnd
	if err == nil {
		end, err = c.d.Answer(raw)
	}
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
	case end == nil || end.StopReason == "":
		return domain.FailedResult(domain.NewError(domain.KindTurnOutcomeUnknown, domain.MsgPromptUndecodable))
	}
	return endResult(*end, c.log)
}

// endResult maps a turn's end, however it arrived, onto the disposition
// table (docs/behaviour.md#turn-disposition): its stop reason, the
// failure marker of its _meta, and its usage through the one entry point
// of the protocol's figures (docs/behaviour.md#token-accounting).
func endResult(end dialect.TurnEnd, log *slog.Logger) domain.TurnResult {
	res := domain.Disposition(end.StopReason, domain.OverrideNone, "")
	applyFailureMarker(&res, end.Meta)
	if end.UsageErr != nil {
		log.Debug("turn usage on the wire could not be decoded; not measured from it", "error", end.UsageErr)
	}
	if f := ingestWireUsage(end.Usage, end.Source, log); f != nil {
		res.Usage, res.Source = &f.usage, f.source
		res.Breakdown = modelBreakdown(end.Meta)
	}
	return res
}
