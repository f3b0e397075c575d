package app

import (
	"context"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpclient"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

// Messages of the turn endings this side decides on its own.
const (
	msgTurnTimeout  = "the turn exceeded turn_timeout_ms"
	msgTurnStalled  = "the agent produced no event within stall_timeout_ms"
	detailNoRefusal = "a permission request offered no option to refuse"
	detailElicit    = "an answer to a question"
)

// ending is a decision of this side to end the running turn.
type ending struct {
	// override, when set, decides the result whatever stopReason follows.
	override domain.Override
	// notice is the notification that announced a person-needed ending.
	notice string
	// err is the result of an ending that is not an override.
	err *domain.AgentError
}

// result is the turn result this ending produces.
func (e ending) result() domain.TurnResult {
	if e.override != domain.OverrideNone {
		detail := ""
		if e.override == domain.OverrideInputRequired {
			detail = detailNoRefusal
			if e.notice == domain.MsgElicitation {
				detail = detailElicit
			}
		}
		return domain.Disposition("", e.override, detail)
	}
	return domain.FailedResult(e.err)
}

// turnState is the running turn as the reader goroutine sees it.
type turnState struct {
	lastEvent atomic.Int64                     // unix nanoseconds of the latest event (stall timer)
	prompt    atomic.Pointer[acpclient.Prompt] // set once the prompt was handed over
	endCh     chan struct{}                    // closed once an ending is decided
	sent      chan struct{}                    // closed once the prompt's hand-over is over, whatever its outcome
	sentOnce  sync.Once
	meta      map[string]string // the prompt's _meta pairs from the observers; set before the prompt goes out

	mu sync.Mutex
	e  *ending
}

func newTurn(now time.Time) *turnState {
	t := &turnState{endCh: make(chan struct{}), sent: make(chan struct{})}
	t.lastEvent.Store(now.UnixNano())
	return t
}

// touch records that an event arrived at.
func (t *turnState) touch(at time.Time) { t.lastEvent.Store(at.UnixNano()) }

// quietFor is how long the turn has gone without an event at now.
func (t *turnState) quietFor(now time.Time) time.Duration {
	return now.Sub(time.Unix(0, t.lastEvent.Load()))
}

// answered reports whether the runtime has answered the turn's prompt.
func (t *turnState) answered() bool {
	p := t.prompt.Load()
	return p != nil && p.Answered()
}

// handedOver records that the prompt's hand-over is over (the prompt is
// stored, or will never be).
func (t *turnState) handedOver() { t.sentOnce.Do(func() { close(t.sent) }) }

// answeredOnReader is answered as the connection's reader goroutine sees it: the
// runtime's answer can be read before SendPrompt returns, so it first waits
// (bounded by the acceptance bound) for the hand-over to end. The reader is
// then the only one that could complete the prompt, so the result says
// exactly whether the answer came before the line being handled.
func (t *turnState) answeredOnReader() bool {
	<-t.sent
	return t.answered()
}

// end records the first ending and wakes the turn; later endings are
// ignored. It reports whether e was the one recorded.
func (t *turnState) end(e ending) bool {
	if !t.claim(e) {
		return false
	}
	t.signal()
	return true
}

// claim records e as the ending without waking the turn yet, so the
// caller can emit what announces it first; it reports whether e won.
func (t *turnState) claim(e ending) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.e != nil {
		return false
	}
	t.e = &e
	return true
}

// signal wakes the turn after a successful claim.
func (t *turnState) signal() { close(t.endCh) }

func (t *turnState) ended() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.e != nil
}

func (t *turnState) ending() ending {
	t.mu.Lock()
	defer t.mu.Unlock()
	return *t.e
}

// runPrompt hands the prompt over within read_timeout_ms and waits for the
// first of: the runtime's answer, an ending decided on the reader side, the
// turn's context, the stall timer, and a broken write side.
func (s *Session) runPrompt(ctx context.Context, t *turnState, prompt string) domain.TurnResult {
	cfg := s.opts.Config
	readTimeout := cfg.EffectiveReadTimeout()
	turnCtx, cancelTurn := ctx, context.CancelFunc(func() {})
	if cfg.TurnTimeout > 0 {
		turnCtx, cancelTurn = context.WithTimeout(ctx, cfg.TurnTimeout)
	}
	defer cancelTurn()
	if t.ended() {
		// A request only a person could answer arrived before the
		// prompt went out: nothing is sent.
		return t.ending().result()
	}

	params := acpwire.PromptRequest{
		SessionID: s.ID(),
		Prompt:    []acpwire.ContentBlock{{Type: "text", Text: prompt}},
		Meta:      t.meta,
	}
	acceptCtx, cancelAccept := context.WithTimeout(turnCtx, readTimeout)
	p, err := s.client.SendPrompt(acceptCtx, params)
	cancelAccept()
	if err == nil {
		t.prompt.Store(p)
	}
	t.handedOver()
	if err != nil {
		return s.sendFailure(turnCtx, err, readTimeout)
	}

	var stall <-chan time.Time
	if cfg.StallTimeout > 0 {
		stall = s.clock.After(cfg.StallTimeout)
	}
	for {
		select {
		case <-p.Done():
			if t.ended() {
				// This side decided first: its ending wins over the
				// stop reason.
				return t.ending().result()
			}
			return s.promptResult(p)
		case <-t.endCh:
			return s.settle(p, t.ending(), readTimeout)
		case <-s.conn.Broken():
			// A write to the runtime did not complete within its bound
			// (docs/behaviour.md#bounds): nothing more can be sent.
			e := ending{err: domain.WrapError(domain.KindPortExit, domain.MsgWriteFailed, s.conn.WriteErr())}
			if !t.end(e) {
				continue
			}
			s.client.Forget(p)
			return e.result()
		case <-turnCtx.Done():
			e := ending{override: domain.OverrideCancel}
			if errors.Is(turnCtx.Err(), context.DeadlineExceeded) {
				e = ending{err: domain.NewError(domain.KindTurnTimeout, msgTurnTimeout)}
			}
			if !t.end(e) {
				continue // an ending was decided first; take it
			}
			return s.settle(p, e, readTimeout)
		case <-stall:
			// One timer, re-armed for the time left since the last event.
			if quiet := t.quietFor(s.clock.Now()); quiet < cfg.StallTimeout {
				stall = s.clock.After(cfg.StallTimeout - quiet)
				continue
			}
			e := ending{err: domain.NewError(domain.KindTurnTimeout, msgTurnStalled)}
			if !t.end(e) {
				continue
			}
			return s.settle(p, e, readTimeout)
		}
	}
}

// sendFailure maps a session/prompt that could not be handed over.
func (s *Session) sendFailure(turnCtx context.Context, err error, readTimeout time.Duration) domain.TurnResult {
	switch {
	case turnCtx.Err() != nil && errors.Is(turnCtx.Err(), context.DeadlineExceeded):
		return domain.FailedResult(domain.NewError(domain.KindTurnTimeout, msgTurnTimeout))
	case turnCtx.Err() != nil:
		return domain.Disposition("", domain.OverrideCancel, "")
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		// The runtime did not take the prompt within read_timeout_ms.
		return domain.FailedResult(domain.WrapError(domain.KindResponseTimeout, domain.MsgTimedOut, err))
	case errors.Is(err, jsonrpc.ErrWriteFailed):
		// A failed write is a lost connection only when the stream's own
		// end follows within read_timeout_ms.
		select {
		case <-s.conn.Done():
			return s.lostConnection(err)
		case <-s.clock.After(readTimeout):
			return domain.FailedResult(domain.WrapError(domain.KindPortExit, domain.MsgPromptSendFailed, err))
		}
	default:
		return s.lostConnection(err)
	}
}

func (s *Session) lostConnection(cause error) domain.TurnResult {
	if s.outputLost.Load() {
		return domain.FailedResult(domain.NewError(domain.KindPortExit, domain.MsgOutputNotCollected))
	}
	return domain.FailedResult(domain.WrapError(domain.KindPortExit, domain.MsgConnEndedBeforeResult, cause))
}

// promptResult reads the stop reason of a prompt's answer
// (docs/behaviour.md#turn-disposition): a JSON-RPC error, an answer with
// both a result and an error, and a lost connection are checked first.
func (s *Session) promptResult(p *acpclient.Prompt) domain.TurnResult {
	resp, err := p.Result()
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
		return s.lostConnection(err)
	case resp.StopReason == "":
		return domain.FailedResult(domain.NewError(domain.KindTurnOutcomeUnknown, domain.MsgPromptUndecodable))
	}
	return domain.Disposition(resp.StopReason, domain.OverrideNone, "")
}

// settle carries out an ending decided by this side: session/cancel once
// (its write bounded by read_timeout_ms), then up to read_timeout_ms for
// the runtime's own answer, whose stop reason is then ignored in favour of
// the ending.
func (s *Session) settle(p *acpclient.Prompt, e ending, readTimeout time.Duration) domain.TurnResult {
	cancelCtx, cancel := context.WithTimeout(context.Background(), readTimeout)
	err := s.client.Cancel(cancelCtx, s.ID())
	cancel()
	if err != nil {
		s.log.Debug("could not send session/cancel", "error", err)
	}
	select {
	case <-p.Done():
		if _, err := p.Result(); err != nil && !isCallError(err) {
			s.log.Debug("connection ended while the turn settled", "error", err)
		}
	case <-s.conn.Broken():
		s.client.Forget(p)
	case <-s.clock.After(readTimeout):
		s.log.Warn("agent did not answer the prompt after session/cancel", "read_timeout", readTimeout)
		s.client.Forget(p)
	}
	return e.result()
}

func isCallError(err error) bool {
	var ce *acpclient.CallError
	return errors.As(err, &ce)
}
