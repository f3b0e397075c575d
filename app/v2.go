package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/protocol/acpclient"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

// Messages of the v2 turn endings (docs/behaviour.md#protocol-v2).
const (
	msgIdleNoStopReason = "the agent reported idle without a stop reason"
	msgV2StateMalformed = "the agent sent a state_update without a state"
)

// Notices of a resumed session that is still working from before
// (docs/behaviour.md#protocol-v2).
const (
	msgEarlierWorkPrefix    = "the resumed session was still working (state "
	msgEarlierWorkSuffix    = "); waiting up to read_timeout_ms for that work to end before the first prompt"
	msgEarlierWorkCancelled = "the resumed session's earlier work did not end within read_timeout_ms; session/cancel was sent"
)

// msgNotAccepted is the cause of a v2 turn whose prompt the runtime did
// not accept within read_timeout_ms.
const msgNotAccepted = "the agent did not accept the prompt within read_timeout_ms"

// v2Part is the ACP v2 draft (docs/behaviour.md#protocol-v2): initialize
// in v2's shape, and the v2 session once a runtime answered 2.
func v2Part() protocolPart {
	return protocolPart{version: acpwire.ProtocolVersion2, ask: askV2, make: newV2Protocol}
}

// askV2 performs the handshake under "2" and "auto": it asks for version
// 2 and accepts what the choice accepts; a runtime that answers another
// version, or refuses with -32022, fails the start as agent_not_found
// naming the versions. A choice that also accepts 1 declares v1's client
// capabilities in v1's shape beside v2's, since a runtime that answers 1
// reads that shape (docs/behaviour.md#protocol-v2).
func askV2(ctx context.Context, c *connection) (acpwire.InitializeResponse, error) {
	choice := c.opts.Settings.Protocol
	info := &acpwire.Implementation{Name: c.opts.ClientName, Version: c.opts.ClientVersion}
	req := acpwire.InitializeRequestV2{ProtocolVersion: acpwire.ProtocolVersion2, Info: info}
	if choice.Accepts(acpwire.ProtocolVersion) {
		caps := v1Capabilities(c)
		req.ClientInfo, req.ClientCapabilities = info, &caps
	}
	callCtx, cancel := context.WithTimeout(ctx, c.opts.Settings.InitializeTimeout())
	resp, err := c.rt.client.InitializeV2(callCtx, req)
	cancel()
	if err != nil {
		if verr := versionRefusedFor(err, acpwire.ProtocolVersion2); verr != nil {
			return resp, verr
		}
		return resp, c.startupError(ctx, acpwire.MethodInitialize, err)
	}
	if v := resp.ProtocolVersion; !choice.Accepts(v) {
		if v <= 0 {
			return resp, domain.NewError(domain.KindResponseError,
				fmt.Sprintf("agent reported protocol version %d, want %d", v, acpwire.ProtocolVersion2))
		}
		return resp, domain.NewError(domain.KindAgentNotFound, fmt.Sprintf(
			"agent answered protocol version %d; --protocol %s accepts only %d", v, choice, acpwire.ProtocolVersion2)).
			WithReason(domain.ReasonProtocolUnsupported)
	}
	if resp.ProtocolVersion == acpwire.ProtocolVersion2 && resp.AgentInfo == nil {
		return resp, domain.NewError(domain.KindResponseError, "a v2 initialize answer needs info")
	}
	return resp, nil
}

// v2Protocol is the session's protocol part on ACP v2: it routes the
// runtime's state_update notifications to the running prompt, rewrites
// the update kinds v2 adds into the event stream's, continues a session
// through session/resume with replayFrom and waits for the work a
// resumed session still does from before.
type v2Protocol struct {
	log         *slog.Logger
	stream      *eventStream
	turns       *turnEngine
	rt          *runtime
	clock       ports.Clock
	readTimeout time.Duration
	sessionID   func() string

	mu       sync.Mutex
	handover chan struct{} // closed once the running prompt is stored
	current  *v2Call
	wg       sync.WaitGroup // each prompt's answer watcher
	watch    *replayWatch   // set while a session/resume waits for its confirmation
	state    string         // the session's latest state ("" before any)
	changed  chan struct{}  // closed (and replaced) when state changes
}

func newV2Protocol(s *Session) protocol {
	return &v2Protocol{log: s.log, stream: s.stream, turns: s.turns, rt: s.conn.rt, clock: s.clock,
		readTimeout: s.opts.Settings.EffectiveReadTimeout(), sessionID: s.ID, changed: make(chan struct{})}
}

func (tr *v2Protocol) version() int { return acpwire.ProtocolVersion2 }

func (tr *v2Protocol) prompter(w promptWire) prompter { return v2Prompter{promptWire: w, tr: tr} }

func (tr *v2Protocol) encodeServers(servers []domain.MCPServer) []json.RawMessage {
	return acpwire.EncodeMCPServersV2(servers)
}

// continuation: session/resume is confirmed by what it replays (or its
// state snapshot); there is no creation-minute hold (that is for
// session/load).
func (tr *v2Protocol) continuation(string) (hold, replay bool) { return false, true }

// continueCall sends session/resume asking for the whole replay, which
// confirms it as a v1 load is confirmed, and so does the state snapshot
// the runtime sends for the session before its answer
// (docs/behaviour.md#protocol-v2).
func (tr *v2Protocol) continueCall(ctx context.Context, client *acpclient.Client, _ string, req acpwire.LoadSessionRequest,
	watch *replayWatch,
) (acpwire.ContinueSessionResponse, error) {
	tr.mu.Lock()
	tr.watch = watch
	tr.mu.Unlock()
	defer func() {
		tr.mu.Lock()
		tr.watch = nil
		tr.mu.Unlock()
	}()
	return client.ResumeV2(ctx, acpwire.ResumeRequestV2{SessionID: req.SessionID, CWD: req.CWD,
		MCPServers: req.MCPServers, ReplayFrom: &acpwire.ReplayCursor{Type: "start"},
		AdditionalDirectories: req.AdditionalDirectories, SystemPrompt: req.SystemPrompt})
}

// continued holds the first prompt while the resumed session still works
// from before (its snapshot, or a later state, is running or
// requires_action): up to read_timeout_ms for that work's idle, then
// session/cancel once and up to read_timeout_ms more; each step is
// announced (docs/behaviour.md#protocol-v2).
func (tr *v2Protocol) continued(ctx context.Context, id string) {
	state, _ := tr.latest()
	if !busy(state) {
		return
	}
	tr.log.Info("the resumed session is still working; waiting for its idle", "session_id", id, "state", state)
	tr.stream.notice(msgEarlierWorkPrefix + state + msgEarlierWorkSuffix)
	if tr.waitIdle(ctx) {
		return
	}
	tr.log.Warn("the resumed session's earlier work did not end within read_timeout_ms; cancelling it",
		"session_id", id, "read_timeout", tr.readTimeout)
	cancelCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), tr.readTimeout)
	err := tr.rt.client.Cancel(cancelCtx, id)
	cancel()
	if err != nil {
		tr.log.Debug("could not send session/cancel", "error", err)
	}
	tr.stream.notice(msgEarlierWorkCancelled)
	tr.waitIdle(ctx)
}

// busy reports whether a session in state is working.
func busy(state string) bool {
	return state == acpwire.StateRunning || state == acpwire.StateRequiresAction
}

// waitIdle waits, up to read_timeout_ms, until the session is no longer
// busy; it reports whether it is not.
func (tr *v2Protocol) waitIdle(ctx context.Context) bool {
	deadline := tr.clock.After(tr.readTimeout)
	for {
		state, changed := tr.latest()
		if !busy(state) {
			return true
		}
		select {
		case <-changed:
		case <-deadline:
			return false
		case <-ctx.Done():
			return false
		case <-tr.rt.conn.Done():
			return false
		}
	}
}

// latest is the session's latest state and a channel closed when it
// changes.
func (tr *v2Protocol) latest() (string, <-chan struct{}) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.state, tr.changed
}

// offer: v2 configures through options only: no session/set_mode, no
// legacy model list (docs/behaviour.md#protocol-v2).
func (tr *v2Protocol) offer(o domain.SessionOffer) domain.SessionOffer {
	o.Modes, o.CurrentMode, o.Models, o.CurrentModel = nil, "", nil, ""
	return o
}

// selectType: v2 names a select's value by its type.
func (tr *v2Protocol) selectType() string { return "id" }

// otherKind takes, on the reader goroutine, an update of a kind v1 does
// not have: a state_update is the part's own, a kind v2 reshaped is
// rewritten into its v1 counterpart and handed back to the stream. The
// event stream decodes every update first, so the chunks that make up a
// stream cost a v2 session nothing more.
func (tr *v2Protocol) otherKind(kind string, params json.RawMessage) bool {
	if tr.notFollowed(kind) {
		return true
	}
	if kind == acpwire.UpdateStateUpdate {
		tr.stateUpdate(params)
		return true
	}
	out, ok := tr.rewrite(kind, params)
	if !ok {
		return false
	}
	if out == nil {
		tr.turns.touch(tr.stream.clock.Now())
		return true
	}
	tr.stream.update(out)
	return true
}

// rewrite reads a kind v2 reshaped as its v1 counterpart
// (docs/behaviour.md#protocol-v2, Updates).
func (tr *v2Protocol) rewrite(kind string, params json.RawMessage) (json.RawMessage, bool) {
	return acpwire.TranslateV2Update(kind, params)
}

// stateUpdate reads one state_update: idle ends the running prompt's
// turn once its prompt was accepted; running and requires_action only
// say the runtime is alive (a request of the runtime meets the permission
// policy whatever state it announced). A state of the session a
// session/resume is waiting for confirms it (its snapshot), and every
// state of the session is kept for a resume's wait for earlier work.
func (tr *v2Protocol) stateUpdate(params json.RawMessage) {
	tr.turns.touch(tr.stream.clock.Now())
	sid, su, _, err := acpwire.DecodeStateUpdate(params)
	if err != nil {
		tr.log.Debug("agent sent a state_update without a state", "error", err)
		tr.stream.other(domain.Event{Type: domain.EventMalformed, Message: msgV2StateMalformed})
		return
	}
	own := tr.sessionID()
	if own != "" && sid != own {
		tr.log.Debug("dropped a state_update for another session", "session_id", sid, "state", su.State)
		return
	}
	tr.mu.Lock()
	w := tr.watch
	if mine := own != "" || w != nil && sid == w.sessionID; mine {
		tr.state = su.State
		close(tr.changed)
		tr.changed = make(chan struct{})
	}
	tr.mu.Unlock()
	if w != nil && sid == w.sessionID {
		// The resumed session's state snapshot names it: the resume is
		// confirmed, with or without a replay.
		w.touch()
		w.observe()
	}
	if su.State != acpwire.StateIdle {
		tr.log.Debug("agent session state", "state", su.State)
		return
	}
	tr.mu.Lock()
	wait := tr.handover
	tr.mu.Unlock()
	if wait != nil {
		<-wait
	}
	tr.mu.Lock()
	c := tr.current
	tr.mu.Unlock()
	if c == nil || !c.p.Answered() {
		// An idle read before this turn's prompt was accepted belongs to
		// earlier work (docs/behaviour.md#protocol-v2).
		tr.log.Debug("agent reported idle outside a turn", "stop_reason", su.StopReason)
		return
	}
	if !c.finish(&su, nil) {
		tr.log.Debug("agent reported a second idle for one turn", "stop_reason", su.StopReason)
	}
}

// endTurn ends the turn's bookkeeping: the prompt is no longer current
// and its answer watcher has ended.
func (tr *v2Protocol) endTurn() {
	tr.mu.Lock()
	c := tr.current
	tr.current = nil
	tr.mu.Unlock()
	if c != nil {
		c.release()
	}
	tr.wg.Wait()
}

// v2Prompter is ACP v2's prompter: session/prompt is answered when the
// prompt is accepted (within read_timeout_ms); the turn ends at the idle
// state_update.
type v2Prompter struct {
	promptWire
	tr *v2Protocol
}

func (p v2Prompter) send(ctx context.Context, req promptRequest) (promptCall, error) {
	handover := make(chan struct{})
	p.tr.mu.Lock()
	p.tr.handover, p.tr.current = handover, nil
	p.tr.mu.Unlock()
	defer func() {
		p.tr.mu.Lock()
		p.tr.handover = nil
		p.tr.mu.Unlock()
		close(handover)
	}()
	pr, err := p.write(ctx, req)
	if err != nil {
		return nil, err
	}
	c := &v2Call{p: pr, rt: p.rt, log: p.log, done: make(chan struct{}), stop: make(chan struct{})}
	c.cancel = func() {
		// The prompt was written whole: it is cancelled as a running
		// turn is (docs/behaviour.md#hangs-and-bounds).
		cancelCtx, cancel := context.WithTimeout(context.Background(), p.tr.readTimeout)
		defer cancel()
		if err := p.promptWire.cancel(cancelCtx, req.sessionID); err != nil {
			p.log.Debug("could not send session/cancel", "error", err)
		}
	}
	p.tr.mu.Lock()
	p.tr.current = c
	p.tr.mu.Unlock()
	p.tr.wg.Add(1)
	go c.watch(&p.tr.wg, p.tr.clock.After(p.tr.readTimeout))
	return c, nil
}

// cancel sends session/cancel for the running prompt once, whoever asks
// first: the turn engine or the acceptance bound.
func (p v2Prompter) cancel(ctx context.Context, sessionID string) error {
	p.tr.mu.Lock()
	c := p.tr.current
	p.tr.mu.Unlock()
	if c == nil {
		return p.promptWire.cancel(ctx, sessionID)
	}
	var err error
	c.cancelOnce.Do(func() { err = p.promptWire.cancel(ctx, sessionID) })
	return err
}

// v2Call is a v2 prompt: accepted (or refused) by its answer, ended by
// an idle.
type v2Call struct {
	p      *acpclient.Prompt
	rt     *runtime
	log    *slog.Logger
	cancel func() // session/cancel for the prompt, bounded

	once       sync.Once
	done       chan struct{} // closed once the turn's end arrived or never will
	stopOnce   sync.Once
	stop       chan struct{} // closed once nobody waits any more
	cancelOnce sync.Once     // session/cancel goes out once

	idle *acpwire.StateUpdate // set before done closes
	err  error                // the prompt's error answer or the connection's end
}

// watch ends the call when the prompt is refused, not accepted within
// the acceptance bound, or the connection ends before the idle; it
// returns once the call is done or released. A prompt not accepted in
// time is cancelled (once) and ends response_timeout, as a v1 prompt the
// runtime does not take (docs/behaviour.md#protocol-v2).
func (c *v2Call) watch(wg *sync.WaitGroup, bound <-chan time.Time) {
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
	if _, err := c.p.Accepted(); err != nil {
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
func (c *v2Call) finish(idle *acpwire.StateUpdate, err error) bool {
	won := false
	c.once.Do(func() {
		c.idle, c.err, won = idle, err, true
		close(c.done)
	})
	return won
}

func (c *v2Call) release() { c.stopOnce.Do(func() { close(c.stop) }) }

func (c *v2Call) Done() <-chan struct{} { return c.done }

func (c *v2Call) Answered() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

func (c *v2Call) forget() {
	c.release()
	c.rt.client.Forget(c.p)
}

func (c *v2Call) settled() {
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
func (c *v2Call) result() domain.TurnResult {
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
		e := &acpclient.CallError{Method: acpwire.MethodSessionPrompt,
			RPC: &jsonrpc.Error{Code: c.idle.Error.Code, Message: c.idle.Error.Message, Data: c.idle.Error.Data}}
		return domain.FailedResult(domain.WrapError(domain.KindResponseError, e.Error(), e))
	case c.idle.StopReason == domain.StopCancelled && c.closing():
		// The session/close of this side's teardown settled the turn
		// (docs/behaviour.md#protocol-v2): a cancellation on this side.
		return domain.Disposition("", domain.OverrideCancel, "")
	}
	res := domain.Disposition(c.idle.StopReason, domain.OverrideNone, "")
	applyFailureMarker(&res, c.idle.Meta)
	// The idle's usage is the protocol's figure of the turn, through the
	// same entry point as v1's prompt result (docs/behaviour.md#token-accounting).
	if u := c.idle.Usage; u != nil {
		c.log.Debug("agent reported the turn's usage on its idle", "input_tokens", u.InputTokens,
			"output_tokens", u.OutputTokens, "total_tokens", u.TotalTokens)
		w := u.Wire()
		if f := ingestWireUsage(&w, domain.SourceStateUpdate, c.log); f != nil {
			res.Usage, res.Source = &f.usage, f.source
			res.Breakdown = modelBreakdown(c.idle.Meta)
		}
	}
	return res
}

// closing reports whether the session's teardown has begun.
func (c *v2Call) closing() bool {
	select {
	case <-c.rt.stopping:
		return true
	default:
		return false
	}
}
