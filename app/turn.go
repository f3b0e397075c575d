package app

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
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
	// decision is the permission_decision of the request a held ending
	// came from: the turn that takes the ending reports it before the
	// notice (docs/behaviour.md#held-endings).
	decision *domain.PermissionInfo
	// err is the result of an ending that is not an override.
	err *domain.AgentError
	// detail, when set, is the detail of a person-needed ending: what sent
	// the request to a person.
	detail string
	// question is the unanswered question a person-needed ending came
	// from (the turn result's Question); a held ending's turn reports its
	// elicitation event before the notice.
	question *domain.ElicitationInfo
}

// result is the turn result this ending produces.
func (e ending) result() domain.TurnResult {
	if e.override != domain.OverrideNone {
		detail := ""
		if e.override == domain.OverrideInputRequired {
			detail = detailNoRefusal
			switch {
			case e.notice == domain.MsgElicitation:
				detail = detailElicit
			case e.detail != "":
				detail = e.detail
			}
		}
		res := domain.Disposition("", e.override, detail)
		if e.override == domain.OverrideInputRequired {
			res.Question = e.question
		}
		return res
	}
	return domain.FailedResult(e.err)
}

// turnState is the running turn as the reader goroutine sees it.
type turnState struct {
	lastEvent atomic.Int64                 // unix nanoseconds of the latest event (stall timer)
	prompt    atomic.Pointer[promptHandle] // set once the prompt was handed over
	endCh     chan struct{}                // closed once an ending is decided
	sent      chan struct{}                // closed once the prompt's hand-over is over, whatever its outcome
	sentOnce  sync.Once
	meta      map[string]string // the prompt's _meta pairs from the observers; set before the prompt goes out
	sending   bool              // the prompt's hand-over began; guarded by the engine's mu

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

// turnBounds are the bounds of one turn (docs/behaviour.md#turn-disposition).
type turnBounds struct {
	read  time.Duration // acceptance, the cancel's write, the wait after it
	turn  time.Duration // the whole turn; 0 disables
	stall time.Duration // the longest quiet; 0 disables
}

func boundsOf(s domain.SessionSettings) turnBounds {
	return turnBounds{read: s.EffectiveReadTimeout(), turn: s.TurnTimeout, stall: s.StallTimeout}
}

// turnEngine runs a session's turns over a prompter: one at a time, each
// with its endings and bounds, and the ending held between turns. It
// consumes the protocol through the prompter and promptCall interfaces
// only, so the way a turn ends on the wire (v1: the prompt's response) is
// the prompter's business.
type turnEngine struct {
	clock ports.Clock
	log   *slog.Logger

	gate sync.Mutex // held by a running turn, so a flush between turns cannot interleave with it

	// running is the running turn. It is set and cleared under mu (with
	// held); the event stream's hot path reads it without the lock.
	running atomic.Pointer[turnState]

	// announce emits the notice of an ending held since the turn began
	// (and the decision it came from), before that turn's outcome; nil
	// emits nothing.
	announce func(*ending)

	mu      sync.Mutex // guards the fields below and turnState.sending
	held    *ending
	started int
}

func newTurnEngine(clock ports.Clock, log *slog.Logger) *turnEngine {
	return &turnEngine{clock: clock, log: log}
}

// begin registers a new turn; ok is false while another one runs.
func (e *turnEngine) begin() (t *turnState, held *ending, first, ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.running.Load() != nil {
		return nil, nil, false, false
	}
	t = newTurn(e.clock.Now())
	e.running.Store(t)
	held, e.held = e.held, nil
	first = e.started == 0
	e.started++
	return t, held, first, true
}

// finish clears the running turn.
func (e *turnEngine) finish() {
	e.mu.Lock()
	e.running.Store(nil)
	e.mu.Unlock()
}

// betweenTurns runs f while no turn runs.
func (e *turnEngine) betweenTurns(f func()) {
	e.gate.Lock()
	defer e.gate.Unlock()
	f()
}

// request decides the answer to a request from the runtime and, when
// the answer needs a person, who owns that ending, in one step under the
// engine's lock (docs/behaviour.md#held-endings): a turn cannot begin or
// hand its prompt over between the two. The ending goes to the running
// turn when its prompt went out and is not answered yet; otherwise (no
// turn, a turn whose prompt has not gone out, an answered one) it is held
// for the next hand-over, which then sends no prompt. decide gets whether
// an ending is already decided. When the running turn owns the ending, it
// is claimed but not yet woken: the caller writes the answer, announces
// the notice and then signals owner, so the notice precedes the turn's
// outcome event. It runs on the reader goroutine, so "answered" is exact.
func (e *turnEngine) request(decide func(endingPending bool) answer) (a answer, owner *turnState) {
	e.mu.Lock()
	defer e.mu.Unlock()
	t := e.running.Load()
	owned := t != nil && e.owns(t)
	a = decide(e.held != nil || owned && t.ended())
	if a.person == "" {
		return a, nil
	}
	end := ending{
		override: domain.OverrideInputRequired,
		notice:   a.person,
		detail:   a.detail,
		question: a.question,
		err:      domain.Disposition("", domain.OverrideInputRequired, "").Err,
	}
	if owned {
		if t.claim(end) {
			return a, t
		}
		return a, nil // an ending was decided first
	}
	if e.held == nil {
		// The turn that takes the held ending reports the decision
		// before its notice; the reader reports nothing of it.
		end.decision, a.decision = a.decision, nil
		a.question = nil // end.question has it
		e.held = &end
	}
	return a, nil
}

// owns reports whether t's prompt went out and is not answered yet: only
// then does an ending belong to t. e.mu must be held; a hand-over that
// began is waited for (bounded by the acceptance bound), and nothing on
// the hand-over's path takes e.mu.
func (e *turnEngine) owns(t *turnState) bool {
	if !t.sending {
		return false
	}
	<-t.sent
	p := t.prompt.Load()
	return p != nil && !p.Answered()
}

// handOver marks the point after which t's prompt goes out, unless an
// ending was held since the turn began: then that ending is returned and
// no prompt is sent.
func (e *turnEngine) handOver(t *turnState) *ending {
	e.mu.Lock()
	defer e.mu.Unlock()
	if held := e.held; held != nil {
		e.held = nil
		return held
	}
	t.sending = true
	return nil
}

// endRunning ends the running turn, if any, with end.
func (e *turnEngine) endRunning(end ending) {
	if t := e.running.Load(); t != nil && !t.answeredOnReader() {
		t.end(end)
	}
}

// touch tells a running turn that the runtime is alive (stall timer).
func (e *turnEngine) touch(at time.Time) {
	if t := e.running.Load(); t != nil {
		t.touch(at)
	}
}

// run hands the prompt over within the read bound and waits for the
// first of: the runtime's answer, an ending decided on the reader side,
// the turn's context, the stall timer, and a broken write side.
func (e *turnEngine) run(ctx context.Context, t *turnState, p prompter, b turnBounds, req promptRequest) domain.TurnResult {
	turnCtx, cancelTurn := ctx, context.CancelFunc(func() {})
	if b.turn > 0 {
		turnCtx, cancelTurn = context.WithTimeoutCause(ctx, b.turn, turnTimeoutCause{})
	}
	defer cancelTurn()
	if held := e.handOver(t); held != nil {
		// A request only a person could answer arrived after the turn
		// began and before its prompt went out: nothing is sent.
		if e.announce != nil {
			e.announce(held)
		}
		t.handedOver()
		return held.result()
	}
	if t.ended() {
		return t.ending().result()
	}
	acceptCtx, cancelAccept := context.WithTimeout(turnCtx, b.read)
	call, err := p.send(acceptCtx, req)
	cancelAccept()
	if err == nil {
		t.prompt.Store(&promptHandle{call})
	}
	t.handedOver()
	if err != nil {
		return e.sendFailure(turnCtx, p, err, b.read)
	}

	var stall <-chan time.Time
	if b.stall > 0 {
		stall = e.clock.After(b.stall)
	}
	// lost is set once this side's ending lost its claim to one decided
	// first (a person-needed ending claimed before its notice went out):
	// the winner signals endCh, so the loop waits for that alone rather
	// than waking again on a context or a stream that stays done.
	lost := false
	for {
		var broken, cancelled <-chan struct{}
		if !lost {
			broken, cancelled = p.broken(), turnCtx.Done()
		}
		select {
		case <-call.Done():
			if t.ended() {
				// This side decided first: its ending wins over the
				// stop reason.
				<-t.endCh
				return t.ending().result()
			}
			return call.result()
		case <-t.endCh:
			return e.settle(p, call, req.sessionID, t.ending(), b.read)
		case <-broken:
			// A write to the runtime did not complete within its bound
			// (docs/behaviour.md#bounds): nothing more can be sent.
			end := ending{err: domain.WrapError(domain.KindPortExit, domain.MsgWriteFailed, p.writeErr())}
			if !t.end(end) {
				lost = true
				continue
			}
			call.forget()
			return end.result()
		case <-cancelled:
			end := ending{override: domain.OverrideCancel}
			if errors.Is(turnCtx.Err(), context.DeadlineExceeded) {
				end = ending{err: domain.NewError(domain.KindTurnTimeout, timeoutMessage(turnCtx))}
			}
			if !t.end(end) {
				lost = true
				continue // an ending was decided first; take it
			}
			return e.settle(p, call, req.sessionID, end, b.read)
		case <-stall:
			// One timer, re-armed for the time left since the last event.
			if quiet := t.quietFor(e.clock.Now()); quiet < b.stall {
				stall = e.clock.After(b.stall - quiet)
				continue
			}
			end := ending{err: domain.NewError(domain.KindTurnTimeout, msgTurnStalled)}
			if !t.end(end) {
				stall = nil
				continue
			}
			return e.settle(p, call, req.sessionID, end, b.read)
		}
	}
}

// turnTimeoutCause is the cause of a turn context ended by
// turn_timeout_ms, told apart from the caller's own deadline.
type turnTimeoutCause struct{}

func (turnTimeoutCause) Error() string { return msgTurnTimeout }

// timeoutMessage words a turn_timeout of turnCtx: turn_timeout_ms when its
// own bound passed, the caller's deadline otherwise
// (docs/behaviour.md#overrides).
func timeoutMessage(turnCtx context.Context) string {
	if errors.Is(context.Cause(turnCtx), turnTimeoutCause{}) {
		return msgTurnTimeout
	}
	return domain.MsgCallerDeadline
}

// sendFailure maps a prompt that could not be handed over.
func (e *turnEngine) sendFailure(turnCtx context.Context, p prompter, err error, readTimeout time.Duration) domain.TurnResult {
	switch {
	case turnCtx.Err() != nil && errors.Is(turnCtx.Err(), context.DeadlineExceeded):
		return domain.FailedResult(domain.NewError(domain.KindTurnTimeout, timeoutMessage(turnCtx)))
	case turnCtx.Err() != nil:
		return domain.Disposition("", domain.OverrideCancel, "")
	}
	if res, waitForEnd := p.classify(err); !waitForEnd {
		return res
	}
	// A failed write is a lost connection only when the stream's own end
	// follows within read_timeout_ms.
	select {
	case <-p.done():
		return p.lostConnection(err)
	case <-e.clock.After(readTimeout):
		return domain.FailedResult(domain.WrapError(domain.KindPortExit, domain.MsgPromptSendFailed, err))
	}
}

// settle carries out an ending decided by this side: the cancel once (its
// write bounded by read_timeout_ms), then up to read_timeout_ms for the
// runtime's own answer, whose stop reason is then ignored in favour of the
// ending.
func (e *turnEngine) settle(p prompter, call promptCall, sessionID string, end ending, readTimeout time.Duration) domain.TurnResult {
	cancelCtx, cancel := context.WithTimeout(context.Background(), readTimeout)
	err := p.cancel(cancelCtx, sessionID)
	cancel()
	if err != nil {
		e.log.Debug("could not send session/cancel", "error", err)
	}
	select {
	case <-call.Done():
		call.settled()
	case <-p.broken():
		call.forget()
	case <-e.clock.After(readTimeout):
		e.log.Warn("agent did not answer the prompt after session/cancel", "read_timeout", readTimeout)
		call.forget()
		res := end.result()
		res.CancelUnanswered = true
		return res
	}
	return end.result()
}
