package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpclient"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

// Messages of the v2 turn endings (docs/behaviour.md#protocol-v2).
const (
	msgIdleNoStopReason = "the agent reported idle without a stop reason"
	msgV2StateMalformed = "the agent sent a state_update without a state"
)

// v2Tracker is the v2 side of a session: it routes the runtime's
// state_update notifications to the running prompt and rewrites the
// update kinds v2 adds into the event stream's. It exists when the
// settings ask for v2 or auto; it acts only once initialize answered 2.
type v2Tracker struct {
	log       *slog.Logger
	stream    *eventStream
	turns     *turnEngine
	sessionID func() string

	active atomic.Bool

	mu       sync.Mutex
	handover chan struct{} // closed once the running prompt is stored
	current  *v2Call
	wg       sync.WaitGroup // each prompt's answer watcher
}

func newV2Tracker(log *slog.Logger, stream *eventStream, turns *turnEngine, sessionID func() string) *v2Tracker {
	return &v2Tracker{log: log, stream: stream, turns: turns, sessionID: sessionID}
}

// activate switches the tracker on: the runtime answered version 2.
func (tr *v2Tracker) activate() { tr.active.Store(true) }

// on reports whether the session speaks v2; false on a nil tracker.
func (tr *v2Tracker) on() bool {
	return tr != nil && tr.active.Load()
}

// otherKind takes, on the reader goroutine, an update of a kind v1 does
// not have, once the session speaks v2: a state_update is the tracker's,
// a kind v2 reshaped is rewritten into its v1 counterpart and handed back
// to the stream. The event stream decodes every update first, so the
// chunks that make up a stream cost a v2 session nothing more.
func (tr *v2Tracker) otherKind(kind string, params json.RawMessage) bool {
	if !tr.on() {
		return false
	}
	if kind == acpwire.UpdateStateUpdate {
		tr.state(params)
		return true
	}
	out, ok := acpwire.TranslateV2Update(kind, params)
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

// state reads one state_update: idle ends the running prompt's turn once
// its prompt was accepted; running and requires_action only say the
// runtime is alive (a request of the runtime meets the permission policy
// whatever state it announced).
func (tr *v2Tracker) state(params json.RawMessage) {
	tr.turns.touch(tr.stream.clock.Now())
	sid, su, _, err := acpwire.DecodeStateUpdate(params)
	if err != nil {
		tr.log.Debug("agent sent a state_update without a state", "error", err)
		tr.stream.other(domain.Event{Type: domain.EventMalformed, Message: msgV2StateMalformed})
		return
	}
	if own := tr.sessionID(); own != "" && sid != own {
		tr.log.Debug("dropped a state_update for another session", "session_id", sid, "state", su.State)
		return
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

// settle ends the turn's bookkeeping: the prompt is no longer current and
// its answer watcher has ended.
func (tr *v2Tracker) settle() {
	if tr == nil {
		return
	}
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
// prompt is accepted; the turn ends at the idle state_update.
type v2Prompter struct {
	v1Prompter
	tr *v2Tracker
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
	p.tr.mu.Lock()
	p.tr.current = c
	p.tr.mu.Unlock()
	p.tr.wg.Add(1)
	go c.watch(&p.tr.wg)
	return c, nil
}

// v2Call is a v2 prompt: accepted (or refused) by its answer, ended by
// an idle.
type v2Call struct {
	p   *acpclient.Prompt
	rt  *runtime
	log *slog.Logger

	once     sync.Once
	done     chan struct{} // closed once the turn's end arrived or never will
	stopOnce sync.Once
	stop     chan struct{} // closed once nobody waits any more

	idle *acpwire.StateUpdate // set before done closes
	err  error                // the prompt's error answer or the connection's end
}

// watch ends the call when the prompt is refused or the connection ends
// before the idle; it returns once the call is done or released.
func (c *v2Call) watch(wg *sync.WaitGroup) {
	defer wg.Done()
	select {
	case <-c.p.Done():
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
// (docs/behaviour.md#turn-disposition, #protocol-v2): a prompt refused
// with -32800 was cancelled, any other error answer is response_error;
// an idle's stop reason goes through the same table as v1's, "error"
// with the JSON-RPC error v1 would have answered.
func (c *v2Call) result() domain.TurnResult {
	var callErr *acpclient.CallError
	var decodeErr *acpclient.DecodeError
	switch {
	case errors.As(c.err, &callErr) && callErr.Code() == jsonrpc.CodeRequestCancelled:
		// v2's answer to a prompt a cancel or session/close ended before
		// it was taken in.
		return domain.Disposition("", domain.OverrideCancel, "")
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

// prompter is the session's prompter: v2's once initialize answered 2.
func (s *Session) prompter() prompter {
	p := v1Prompter{rt: s.rt, log: s.log, kids: s.stream.kids}
	if s.v2.on() {
		return v2Prompter{v1Prompter: p, tr: s.v2}
	}
	return p
}

// encodeServers encodes the delivered servers for the version in use.
func (s *Session) encodeServers() []json.RawMessage {
	if s.v2.on() {
		return acpwire.EncodeMCPServersV2(s.servers)
	}
	return acpwire.EncodeMCPServers(s.servers)
}

// call sends the continuation call: v1's route as advertised, or v2's
// session/resume asking for the whole replay, which confirms it as a v1
// load is confirmed (docs/behaviour.md#protocol-v2).
func (c *continuation) call(ctx context.Context, route string, req acpwire.LoadSessionRequest) (acpwire.ContinueSessionResponse, error) {
	if c.v2 {
		return c.client.ResumeV2(ctx, acpwire.ResumeRequestV2{SessionID: req.SessionID, CWD: req.CWD,
			MCPServers: req.MCPServers, ReplayFrom: &acpwire.ReplayCursor{Type: "start"},
			AdditionalDirectories: req.AdditionalDirectories, SystemPrompt: req.SystemPrompt})
	}
	return c.client.ContinueWith(ctx, route, req)
}

// initializeV2 performs the handshake under "2" and "auto": it asks for
// version 2 and accepts what the choice accepts; a runtime that answers
// another version, or refuses with -32022, fails the start as
// agent_not_found naming the versions (docs/behaviour.md#protocol-v2).
func (s *Session) initializeV2(ctx context.Context) error {
	choice := s.opts.Settings.Protocol
	req := acpwire.InitializeRequestV2{ProtocolVersion: acpwire.ProtocolVersion2,
		Info: &acpwire.Implementation{Name: s.opts.ClientName, Version: s.opts.ClientVersion}}
	callCtx, cancel := context.WithTimeout(ctx, s.opts.Settings.InitializeTimeout())
	resp, err := s.rt.client.InitializeV2(callCtx, req)
	cancel()
	if err != nil {
		if verr := versionRefusedFor(err, acpwire.ProtocolVersion2); verr != nil {
			return verr
		}
		return s.startupError(ctx, acpwire.MethodInitialize, err)
	}
	if v := resp.ProtocolVersion; !choice.Accepts(v) {
		if v <= 0 {
			return domain.NewError(domain.KindResponseError,
				fmt.Sprintf("agent reported protocol version %d, want %d", v, acpwire.ProtocolVersion2))
		}
		return domain.NewError(domain.KindAgentNotFound, fmt.Sprintf(
			"agent answered protocol version %d; --protocol %s accepts only %d", v, choice, acpwire.ProtocolVersion2))
	}
	if resp.ProtocolVersion == acpwire.ProtocolVersion2 {
		if resp.AgentInfo == nil {
			return domain.NewError(domain.KindResponseError, "a v2 initialize answer needs info")
		}
		s.v2.activate()
	}
	s.handshake(resp)
	return nil
}
