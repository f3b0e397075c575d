package app

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

// NegativeControlMethod is the vendor-namespaced method sent before a
// continuation call: no protocol release can claim a "_"-prefixed name, so
// the code the runtime answers it with is its "unimplemented" code.
const NegativeControlMethod = "_acpdrive.dev/probe/unimplemented"

// maxCreationHold bounds the wait before loading a session this process
// created in the current UTC minute.
const maxCreationHold = time.Minute

// replayQuiet is how long a confirmed session/load waits for the replay to
// go quiet before the start returns: runtimes (Gemini CLI) keep replaying
// after their response, and a replay read after the next turn started would
// be taken for that turn's reply. The wait is bounded by read_timeout_ms
// after the response.
const replayQuiet = 200 * time.Millisecond

// NegativeControl records how the runtime answered the negative control.
type NegativeControl struct {
	// Sent reports whether the control was sent at all.
	Sent bool `json:"sent"`
	// Answered reports whether any response arrived within read_timeout_ms.
	Answered bool `json:"answered"`
	// Code is the JSON-RPC error code of the answer, when it was an error.
	Code *int64 `json:"code,omitempty"`
	// Message is the error message of the answer, when it was an error.
	Message string `json:"message,omitempty"`
	// Result reports an answer with a result instead of an error (legacy
	// Rust-SDK agents answer unknown "_" methods with null).
	Result bool `json:"result,omitempty"`
	// Failure says why no answer arrived (timeout, connection lost).
	Failure string `json:"failure,omitempty"`
}

// createdAt remembers, in process memory, when this process created each
// session, for the UTC-minute hold before a session/load.
var createdAt sync.Map // session id → time.Time

func rememberCreated(id string, at time.Time) { createdAt.Store(id, at.UTC()) }

// ContinuationRoute is the continuation method a runtime with this
// handshake is continued through, in the fixed order of the
// specification: session/load when loadSession is true, else
// session/resume when advertised, else "" (only session/new).
func ContinuationRoute(init acpwire.InitializeResponse) string {
	switch {
	case init.AgentCapabilities.LoadSession:
		return acpwire.MethodSessionLoad
	case init.AgentCapabilities.SessionCapabilities.CanResume():
		return acpwire.MethodSessionResume
	}
	return ""
}

// resolve creates or continues the session (seed "Session start" step 6).
// No continuation outcome fails the start on its own account: any error,
// timeout or unconfirmed load lowers "session continuation" and falls back
// to session/new.
func (s *Session) resolve(ctx context.Context) error {
	id := s.opts.ResumeSessionID
	route := ContinuationRoute(s.init)
	if id != "" && route == "" {
		s.log.Info("the runtime advertises no continuation method; creating a new session", "session_id", id)
	}
	if id != "" && route != "" {
		err := s.continueSession(ctx, route, id)
		if err == nil {
			s.route = route
			return nil
		}
		s.lower(domain.CapSessionContinuation)
		s.log.Warn("session continuation not confirmed; falling back to session/new",
			"route", route, "session_id", id, "reason", err.Error())
	}
	s.route = acpwire.MethodSessionNew
	return s.createSession(ctx)
}

// continueSession runs the negative control and then the continuation
// call; it returns nil only when the continuation is confirmed.
func (s *Session) continueSession(ctx context.Context, route, id string) error {
	s.control = s.negativeControl(ctx)
	if !s.control.Answered {
		return fmt.Errorf("the negative control was not answered: %s", s.control.Failure)
	}
	if route == acpwire.MethodSessionLoad {
		s.holdForCreationMinute(ctx, id)
	}
	readTimeout := s.opts.Config.EffectiveReadTimeout()
	req := acpwire.LoadSessionRequest{SessionID: id, CWD: s.opts.Workspace, MCPServers: s.mcpServers()}

	var watch *replayWatch
	if route == acpwire.MethodSessionLoad {
		watch = newReplayWatch(id)
		s.mu.Lock()
		s.replay = watch
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			s.replay = nil
			s.mu.Unlock()
		}()
	}
	callCtx, cancel := context.WithTimeout(ctx, readTimeout)
	_, err := s.conn.Call(callCtx, route, req)
	cancel()
	if err != nil {
		s.logControlComparison(route, id, err)
		return fmt.Errorf("%s failed: %w", route, err)
	}
	if watch != nil {
		deadline := s.opts.Clock.After(readTimeout)
		select {
		case <-watch.seen:
		case <-deadline:
			return fmt.Errorf("%s answered success but replayed no message for %q within %s", route, id, readTimeout)
		case <-ctx.Done():
			return ctx.Err()
		}
		watch.settle(ctx, s.opts.Clock, deadline)
	}
	s.adopt(id)
	s.log.Info("agent session continued", "route", route, "session_id", id, "agent_pid", s.proc.PID())
	return nil
}

// negativeControl sends the vendor-namespaced control request and records
// the answer, bounded by read_timeout_ms.
func (s *Session) negativeControl(ctx context.Context) NegativeControl {
	nc := NegativeControl{Sent: true}
	callCtx, cancel := context.WithTimeout(ctx, s.opts.Config.EffectiveReadTimeout())
	defer cancel()
	_, err := s.conn.Call(callCtx, NegativeControlMethod, struct{}{})
	var rpcErr *jsonrpc.Error
	switch {
	case err == nil:
		nc.Answered, nc.Result = true, true
	case errors.As(err, &rpcErr):
		code := rpcErr.Code
		nc.Answered, nc.Code, nc.Message = true, &code, rpcErr.Message
	case errors.Is(err, context.DeadlineExceeded):
		nc.Failure = "no answer within read_timeout_ms"
	default:
		nc.Failure = err.Error()
	}
	s.log.Debug("negative control answered", "method", NegativeControlMethod, "answered", nc.Answered,
		"code", codeAttr(nc.Code), "result", nc.Result)
	return nc
}

// logControlComparison tells an operator whether a failed continuation
// call looks unimplemented (the runtime answers it the way it answers an
// unknown method) or broken (it answers differently).
func (s *Session) logControlComparison(route, id string, err error) {
	var rpcErr *jsonrpc.Error
	verdict := "unanswered"
	callCode := ""
	if errors.As(err, &rpcErr) {
		callCode = fmt.Sprint(rpcErr.Code)
		switch {
		case s.control.Code != nil && *s.control.Code == rpcErr.Code:
			verdict = "unimplemented"
		default:
			verdict = "broken"
		}
	}
	s.log.Warn("session continuation call failed", "route", route, "session_id", id,
		"call_code", callCode, "control_code", codeAttr(s.control.Code), "verdict", verdict, "error", err)
}

func codeAttr(code *int64) string {
	if code == nil {
		return ""
	}
	return fmt.Sprint(*code)
}

// holdForCreationMinute waits, for a session this process created, until
// the wall clock leaves the UTC minute of its creation (bounded at one
// minute): some runtimes store sessions under minute-resolution names and
// destroy a session loaded in the minute it was created.
func (s *Session) holdForCreationMinute(ctx context.Context, id string) {
	v, ok := createdAt.Load(id)
	if !ok {
		return
	}
	leave := v.(time.Time).Truncate(time.Minute).Add(time.Minute)
	wait := leave.Sub(s.opts.Clock.Now())
	if wait <= 0 {
		return
	}
	wait = min(wait, maxCreationHold)
	s.log.Info("holding session/load until the UTC minute of the session's creation has passed",
		"session_id", id, "wait", wait)
	select {
	case <-s.opts.Clock.After(wait):
	case <-ctx.Done():
	}
}

// replayWatch observes the replay a session/load must produce.
type replayWatch struct {
	sessionID string
	once      sync.Once
	seen      chan struct{} // closed at the first replayed message chunk
	activity  chan struct{} // pinged by every update naming the session
}

func newReplayWatch(id string) *replayWatch {
	return &replayWatch{sessionID: id, seen: make(chan struct{}), activity: make(chan struct{}, 1)}
}

// observe records a replayed message chunk: the load is confirmed.
func (w *replayWatch) observe() { w.once.Do(func() { close(w.seen) }) }

// touch records any update naming the loaded session.
func (w *replayWatch) touch() {
	select {
	case w.activity <- struct{}{}:
	default:
	}
}

// settle waits until the replay has been quiet for replayQuiet, or the
// deadline passes, or ctx ends.
func (w *replayWatch) settle(ctx context.Context, clock ports.Clock, deadline <-chan time.Time) {
	for {
		select {
		case <-w.activity:
		case <-clock.After(replayQuiet):
			return
		case <-deadline:
			return
		case <-ctx.Done():
			return
		}
	}
}
