package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpdrive/acpdrive/domain"
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
	lastEvent atomic.Int64  // unix nanoseconds of the latest event (stall timer)
	endCh     chan struct{} // closed once an ending is decided

	mu sync.Mutex
	e  *ending
}

func newTurn(now time.Time) *turnState {
	t := &turnState{endCh: make(chan struct{})}
	t.lastEvent.Store(now.UnixNano())
	return t
}

// touch records that an event arrived at.
func (t *turnState) touch(at time.Time) { t.lastEvent.Store(at.UnixNano()) }

// quietFor is how long the turn has gone without an event at now.
func (t *turnState) quietFor(now time.Time) time.Duration {
	return now.Sub(time.Unix(0, t.lastEvent.Load()))
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

// Turn sends one session/prompt on the session and relays the runtime's
// updates as events until the turn ends. Cancelling ctx cancels the turn
// (session/cancel is sent once); a ctx deadline ends it as turn_timeout.
// Only one turn may run at a time: a second concurrent call is refused with
// response_error before anything reaches the runtime.
func (s *Session) Turn(ctx context.Context, prompt string) domain.TurnResult {
	s.mu.Lock()
	if s.turn != nil {
		s.mu.Unlock()
		return domain.FailedResult(domain.NewError(domain.KindResponseError, domain.MsgTurnInFlight))
	}
	t := newTurn(s.opts.Clock.Now())
	s.turn = t
	held := s.held
	s.held = nil
	first := s.turnsStarted == 0
	s.turnsStarted++
	caps := s.caps
	if first {
		s.noticeSent = true
	}
	s.mu.Unlock()

	s.flushMessage()
	s.emit(domain.Event{Type: domain.EventSessionStarted, SessionID: s.ID(), Message: domain.MsgSessionStarted})
	if notice, ok := caps.Notice(); first && ok {
		s.emit(domain.Event{Type: domain.EventNotification, Message: notice})
	}

	var res domain.TurnResult
	switch {
	case s.outputLost.Load():
		res = domain.FailedResult(domain.NewError(domain.KindPortExit, domain.MsgOutputNotCollected))
	case held != nil:
		s.emit(domain.Event{Type: domain.EventNotification, Message: held.notice})
		res = held.result()
	case isDone(s.conn.Done()):
		res = domain.FailedResult(domain.NewError(domain.KindPortExit, domain.MsgConnEndedBeforeResult))
	default:
		res = s.runPrompt(ctx, t, prompt)
	}

	s.flushMessage()
	s.closeOpenTools()
	s.mu.Lock()
	s.turn = nil
	s.mu.Unlock()
	s.emit(outcomeEvent(res))
	return res
}

// outcomeEvent is the event that closes a turn: turn_failed for a failure
// the runtime reported through its stop reason, turn_ended_with_error for
// any other failure.
func outcomeEvent(res domain.TurnResult) domain.Event {
	typ := res.Outcome.Event()
	if res.Outcome == domain.OutcomeFailed && res.StopReason == "" {
		typ = domain.EventTurnEndedWithError
	}
	return domain.Event{Type: typ, Message: res.Message()}
}

func (s *Session) runPrompt(ctx context.Context, t *turnState, prompt string) domain.TurnResult {
	cfg := s.opts.Config
	readTimeout := cfg.EffectiveReadTimeout()
	turnCtx, cancelTurn := ctx, context.CancelFunc(func() {})
	if cfg.TurnTimeout > 0 {
		turnCtx, cancelTurn = context.WithTimeout(ctx, cfg.TurnTimeout)
	}
	defer cancelTurn()

	params := acpwire.PromptRequest{
		SessionID: s.ID(),
		Prompt:    []acpwire.ContentBlock{{Type: "text", Text: prompt}},
	}
	acceptCtx, cancelAccept := context.WithTimeout(turnCtx, readTimeout)
	pending, err := s.conn.Send(acceptCtx, acpwire.MethodSessionPrompt, params)
	cancelAccept()
	if err != nil {
		return s.sendFailure(turnCtx, err, readTimeout)
	}

	var stall <-chan time.Time
	if cfg.StallTimeout > 0 {
		stall = s.opts.Clock.After(cfg.StallTimeout)
	}
	for {
		select {
		case <-pending.Done():
			if t.ended() {
				// This side decided first: its ending wins over the
				// stop reason.
				return t.ending().result()
			}
			return s.promptResult(pending)
		case <-t.endCh:
			return s.settle(pending, t.ending(), readTimeout)
		case <-turnCtx.Done():
			e := ending{override: domain.OverrideCancel}
			if errors.Is(turnCtx.Err(), context.DeadlineExceeded) {
				e = ending{err: domain.NewError(domain.KindTurnTimeout, msgTurnTimeout)}
			}
			if !t.end(e) {
				continue // an ending was decided first; take it
			}
			return s.settle(pending, e, readTimeout)
		case <-stall:
			// One timer, re-armed for the time left since the last event.
			if quiet := t.quietFor(s.opts.Clock.Now()); quiet < cfg.StallTimeout {
				stall = s.opts.Clock.After(cfg.StallTimeout - quiet)
				continue
			}
			e := ending{err: domain.NewError(domain.KindTurnTimeout, msgTurnStalled)}
			if !t.end(e) {
				continue
			}
			return s.settle(pending, e, readTimeout)
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
		case <-s.opts.Clock.After(readTimeout):
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

// promptResult reads the stop reason of a prompt response (reference-tables
// §4): a JSON-RPC error and a lost connection are checked first.
func (s *Session) promptResult(p *jsonrpc.Pending) domain.TurnResult {
	raw, err := p.Result()
	var rpcErr *jsonrpc.Error
	switch {
	case errors.As(err, &rpcErr):
		return domain.FailedResult(domain.WrapError(domain.KindResponseError,
			fmt.Sprintf("%s error %d: %s", acpwire.MethodSessionPrompt, rpcErr.Code, rpcErr.Message), rpcErr))
	case err != nil:
		return s.lostConnection(err)
	}
	var resp acpwire.PromptResponse
	if err := json.Unmarshal(raw, &resp); err != nil || resp.StopReason == "" {
		return domain.FailedResult(domain.WrapError(domain.KindTurnOutcomeUnknown, domain.MsgPromptUndecodable, err))
	}
	return domain.Disposition(resp.StopReason, domain.OverrideNone, "")
}

// settle carries out an ending decided by this side: session/cancel once,
// then up to read_timeout_ms for the runtime's own answer, whose stop
// reason is then ignored in favour of the ending.
func (s *Session) settle(p *jsonrpc.Pending, e ending, readTimeout time.Duration) domain.TurnResult {
	if err := s.conn.Notify(acpwire.MethodSessionCancel, acpwire.SessionIDParams{SessionID: s.ID()}); err != nil {
		s.log.Debug("could not send session/cancel", "error", err)
	}
	select {
	case <-p.Done():
		if _, err := p.Result(); err != nil && !isRPCError(err) {
			s.log.Debug("connection ended while the turn settled", "error", err)
		}
	case <-s.opts.Clock.After(readTimeout):
		s.log.Warn("agent did not answer the prompt after session/cancel", "read_timeout", readTimeout)
		s.conn.Forget(p)
	}
	return e.result()
}

func isRPCError(err error) bool {
	var rpcErr *jsonrpc.Error
	return errors.As(err, &rpcErr)
}

func isDone(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
