package app

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpclient"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
	"github.com/acpdrive/acpdrive/protocol/dialect"
	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

// Messages of the turn endings of a dialect whose turns end with a state
// (docs/behaviour.md#protocol-v2).
const msgIdleNoStopReason = "the agent reported idle without a stop reason"

// Notices of a resumed session that is still working from before
// (docs/behaviour.md#protocol-v2).
const (
	msgEarlierWorkPrefix    = "the resumed session was still working (state "
	msgEarlierWorkSuffix    = "); waiting up to read_timeout_ms for that work to end before the first prompt"
	msgEarlierWorkCancelled = "the resumed session's earlier work did not end within read_timeout_ms; session/cancel was sent"
)

// msgNotAccepted is the cause of a turn whose prompt the runtime did not
// accept within read_timeout_ms, on a dialect whose turns end with a state.
const msgNotAccepted = "the agent did not accept the prompt within read_timeout_ms"

// continued holds the first prompt while the resumed session still works
// from before (its snapshot, or a later state, is running or
// requires_action): up to read_timeout_ms for that work's idle, then
// session/cancel once and up to read_timeout_ms more; each step is
// announced (docs/behaviour.md#protocol-v2).
func (sp *sessionProtocol) continued(ctx context.Context, id string) {
	state, _ := sp.latest()
	if !state.Busy {
		return
	}
	sp.log.Info("the resumed session is still working; waiting for its idle", "session_id", id, "state", state.Name)
	sp.stream.notice(msgEarlierWorkPrefix + state.Name + msgEarlierWorkSuffix)
	if sp.waitIdle(ctx) {
		return
	}
	sp.log.Warn("the resumed session's earlier work did not end within read_timeout_ms; cancelling it",
		"session_id", id, "read_timeout", sp.readTimeout)
	cancelCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sp.readTimeout)
	err := sp.rt.client.Cancel(cancelCtx, id)
	cancel()
	if err != nil {
		sp.log.Debug("could not send session/cancel", "error", err)
	}
	sp.stream.notice(msgEarlierWorkCancelled)
	sp.waitIdle(ctx)
}

// waitIdle waits, up to read_timeout_ms, until the session is no longer
// busy; it reports whether it is not.
func (sp *sessionProtocol) waitIdle(ctx context.Context) bool {
	deadline := sp.clock.After(sp.readTimeout)
	for {
		state, changed := sp.latest()
		if !state.Busy {
			return true
		}
		select {
		case <-changed:
		case <-deadline:
			return false
		case <-ctx.Done():
			return false
		case <-sp.rt.conn.Done():
			return false
		}
	}
}

// latest is the session's latest state and a channel closed when it
// changes.
func (sp *sessionProtocol) latest() (dialect.State, <-chan struct{}) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.state, sp.changed
}

// stateUpdate reads one state the session reported (dialect.KindState):
// idle ends the running prompt's turn once its prompt was accepted;
// another state only says the runtime is alive (a request of the runtime
// meets the permission policy whatever state it announced). A state of the
// session a continuation is waiting for confirms it (its snapshot), and
// every state of the session is kept for a resume's wait for earlier work.
// It takes every state: true.
func (sp *sessionProtocol) stateUpdate(sid string, u dialect.Update) bool {
	sp.turns.touch(sp.stream.clock.Now())
	st := u.State
	if st.Malformed != "" {
		sp.log.Debug("agent sent a session state this client could not read", "kind", u.Wire.Kind)
		sp.stream.other(domain.Event{Type: domain.EventMalformed, Message: st.Malformed})
		return true
	}
	own := sp.sessionID()
	if own != "" && sid != own {
		sp.log.Debug("dropped a session state for another session", "session_id", sid, "state", st.Name)
		return true
	}
	sp.mu.Lock()
	w := sp.watch
	if mine := own != "" || w != nil && sid == w.sessionID; mine {
		sp.state = *st
		close(sp.changed)
		sp.changed = make(chan struct{})
	}
	sp.mu.Unlock()
	if w != nil && sid == w.sessionID {
		// The resumed session's state snapshot names it: the resume is
		// confirmed, with or without a replay.
		w.touch()
		w.observe()
	}
	if !st.Idle {
		sp.log.Debug("agent session state", "state", st.Name)
		return true
	}
	sp.mu.Lock()
	wait := sp.handover
	sp.mu.Unlock()
	if wait != nil {
		<-wait
	}
	sp.mu.Lock()
	c := sp.current
	sp.mu.Unlock()
	if c == nil || !c.p.Answered() {
		// An idle read before this turn's prompt was accepted belongs to
		// earlier work (docs/behaviour.md#protocol-v2).
		sp.log.Debug("agent reported idle outside a turn", "stop_reason", st.End.StopReason)
		return true
	}
	if !c.finish(&st.End, nil) {
		sp.log.Debug("agent reported a second idle for one turn", "stop_reason", st.End.StopReason)
	}
	return true
}

// endTurn ends the turn's bookkeeping: the prompt is no longer current
// and its answer watcher has ended.
func (sp *sessionProtocol) endTurn() {
	sp.mu.Lock()
	c := sp.current
	sp.current = nil
	sp.mu.Unlock()
	if c != nil {
		c.release()
	}
	sp.wg.Wait()
}

// statePrompter is the prompter of a dialect whose turns end with a state
// (dialect.EndsWithState): session/prompt is answered when the prompt is
// accepted (within read_timeout_ms); the turn ends at the idle state.
type statePrompter struct {
	promptWire
	sp *sessionProtocol
}

func (p statePrompter) send(ctx context.Context, req promptRequest) (promptCall, error) {
	handover := make(chan struct{})
	p.sp.mu.Lock()
	p.sp.handover, p.sp.current = handover, nil
	p.sp.mu.Unlock()
	defer func() {
		p.sp.mu.Lock()
		p.sp.handover = nil
		p.sp.mu.Unlock()
		close(handover)
	}()
	pr, err := p.write(ctx, req)
	if err != nil {
		return nil, err
	}
	c := &stateCall{p: pr, d: p.sp.d, rt: p.rt, log: p.log, done: make(chan struct{}), stop: make(chan struct{})}
	c.cancel = func() {
		// The prompt was written whole: it is cancelled as a running
		// turn is (docs/behaviour.md#hangs-and-bounds).
		cancelCtx, cancel := context.WithTimeout(context.Background(), p.sp.readTimeout)
		defer cancel()
		if err := p.promptWire.cancel(cancelCtx, req.sessionID); err != nil {
			p.log.Debug("could not send session/cancel", "error", err)
		}
	}
	p.sp.mu.Lock()
	p.sp.current = c
	p.sp.mu.Unlock()
	p.sp.wg.Add(1)
	go c.watch(&p.sp.wg, p.sp.clock.After(p.sp.readTimeout))
	return c, nil
}

// cancel sends session/cancel for the running prompt once, whoever asks
// first: the turn engine or the acceptance bound.
func (p statePrompter) cancel(ctx context.Context, sessionID string) error {
	p.sp.mu.Lock()
	c := p.sp.current
	p.sp.mu.Unlock()
	if c == nil {
		return p.promptWire.cancel(ctx, sessionID)
	}
	var err error
	c.cancelOnce.Do(func() { err = p.promptWire.cancel(ctx, sessionID) })
	return err
}

// stateCall is a prompt accepted (or refused) by its answer and ended by
// an idle state.
type stateCall struct {
	p      *acpclient.Prompt
	d      dialect.Dialect
	rt     *runtime
	log    *slog.Logger
	cancel func() // session/cancel for the prompt, bounded

	once       sync.Once
	done       chan struct{} // closed once the turn's end arrived or never will
	stopOnce   sync.Once
	stop       chan struct{} // closed once nobody waits any more
	cancelOnce sync.Once     // session/cancel goes out once

	idle *dialect.TurnEnd // the idle's end, set before done closes
	err  error            // the prompt's error answer or the connection's end
}

// watch ends the call when the prompt is refused, not accepted within
// the acceptance bound, or the connection ends before the idle; it
// returns once the call is done or released. A prompt not accepted in
// time is cancelled (once) and ends response_timeout, as a v1 prompt the
// runtime does not take (docs/behaviour.md#protocol-v2).
func (c *stateCall) watch(wg *sync.WaitGroup, bound <-chan time.Time) {
	defer wg.Done()
	select {
	case <-c.p.Done():
	case <-bound:
		if c.p.Answered() {
			break // the answer came with the bound: it is read
		}
		c.log.Warn("agent did not accept the prompt within read_timeout_ms")
		c.rt.client.Forget(c.p)
		c.cancelOnce.Do(c.cancel)
		c.finish(nil, domain.WrapError(domain.KindResponseTimeout, domain.MsgTimedOut, errors.New(msgNotAccepted)))
		return
	case <-c.done:
		return
	case <-c.stop:
		return
	}
	raw, err := c.p.Answer()
	if err == nil {
		_, err = c.d.Answer(raw)
	}
	if err != nil {
		c.finish(nil, err)
		return
	}
	select {
	case <-c.rt.conn.Done():
		c.finish(nil, errors.New("the connection ended before the agent reported idle"))
	case <-c.done:
	case <-c.stop:
	}
}

// finish records the end once; it reports whether this was the one.
func (c *stateCall) finish(idle *dialect.TurnEnd, err error) bool {
	won := false
	c.once.Do(func() {
		c.idle, c.err, won = idle, err, true
		close(c.done)
	})
	return won
}

func (c *stateCall) release() { c.stopOnce.Do(func() { close(c.stop) }) }

func (c *stateCall) Done() <-chan struct{} { return c.done }

func (c *stateCall) Answered() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

func (c *stateCall) forget() {
	c.release()
	c.rt.client.Forget(c.p)
}

func (c *stateCall) settled() {
	if c.err != nil && !isCallError(c.err) {
		c.log.Debug("connection ended while the turn settled", "error", c.err)
	}
}

// result maps the turn's end onto the disposition table
// (docs/behaviour.md#turn-disposition, #protocol-v2): only a
// cancellation this side asked for is turn_cancelled, as on v1 — a prompt
// refused with -32800, or an idle "cancelled", once the teardown's
// session/close has begun; any other error answer is response_error, a
// prompt not accepted in time response_timeout; an idle's stop reason goes
// through the same table as v1's, "error" with the JSON-RPC error v1 would
// have answered.
func (c *stateCall) result() domain.TurnResult {
	var callErr *acpclient.CallError
	var decodeErr *acpclient.DecodeError
	var agentErr *domain.AgentError
	switch {
	case errors.As(c.err, &callErr) && callErr.Code() == jsonrpc.CodeRequestCancelled && c.closing():
		// v2's answer to a prompt the session/close of this side's
		// teardown ended before it was taken in: a cancellation on this
		// side. A -32800 nobody asked for is the runtime's error, as on
		// v1 (docs/behaviour.md#protocol-v2); a cancel of this side's
		// decided the turn before its answer was read (turn.go).
		return domain.Disposition("", domain.OverrideCancel, "")
	case errors.As(c.err, &agentErr):
		// This side's own ending of the call: the acceptance bound.
		return domain.FailedResult(agentErr)
	case errors.As(c.err, &callErr):
		return domain.FailedResult(domain.WrapError(domain.KindResponseError, callErr.Error(), callErr))
	case errors.Is(c.err, jsonrpc.ErrAmbiguousResponse):
		return domain.FailedResult(domain.WrapError(domain.KindTurnOutcomeUnknown, domain.MsgPromptAmbiguous, c.err))
	case errors.As(c.err, &decodeErr):
		return domain.FailedResult(domain.WrapError(domain.KindTurnOutcomeUnknown, domain.MsgPromptUndecodable, c.err))
	case c.err != nil:
		return c.rt.lostConnection(c.err)
	case c.idle == nil || c.idle.StopReason == "":
		return domain.FailedResult(domain.NewError(domain.KindTurnOutcomeUnknown, msgIdleNoStopReason))
	case c.idle.StopReason == "error" && c.idle.Error != nil:
		// The error v1 would have answered the prompt with, worded as v1's.
		e := &acpclient.CallError{Method: acpwire.MethodSessionPrompt, RPC: c.idle.Error}
		return domain.FailedResult(domain.WrapError(domain.KindResponseError, e.Error(), e))
	case c.idle.StopReason == domain.StopCancelled && c.closing():
		// The session/close of this side's teardown settled the turn
		// (docs/behaviour.md#protocol-v2): a cancellation on this side.
		return domain.Disposition("", domain.OverrideCancel, "")
	}
	// The idle's usage is the protocol's figure of the turn, through the
	// same entry point as a prompt answer's (docs/behaviour.md#token-accounting).
	if u := c.idle.Usage; u != nil {
		c.log.Debug("agent reported the turn's usage on its idle", "input_tokens", count(u.InputTokens),
			"output_tokens", count(u.OutputTokens), "total_tokens", count(u.TotalTokens))
	}
	return endResult(*c.idle, c.log)
}

// count is a counter of a usage for a log line, 0 when absent.
func count(v *int64) int64 {
	if v == nil {
		return 0
	}
	return *v
}

// closing reports whether the session's teardown has begun.
func (c *stateCall) closing() bool {
	select {
	case <-c.rt.stopping:
		return true
	default:
		return false
	}
}

// childState reads one state a child session reported on its own
// session: it is the child's work state (child_state, as a subagent
// update's state is); one that could not be read is malformed on the
// child's stream. It takes every state: true.
func childState(kids *children, ch *child, u dialect.Update) bool {
	cs := ch.stream
	st := u.State
	if st.Malformed != "" {
		cs.log.Debug("a child session sent a session state this client could not read", "kind", u.Wire.Kind)
		cs.other(domain.Event{Type: domain.EventMalformed, Message: st.Malformed})
		return true
	}
	sub := &acpwire.SubagentState{State: st.Name, StopReason: st.End.StopReason}
	if e := st.End.Error; e != nil {
		sub.Error = &acpwire.SubagentError{Code: e.Code, Message: e.Message}
	}
	kids.ownState(ch, sub, cs.clock.Now())
	return true
}
