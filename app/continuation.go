package app

import (
	"context"
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

// NegativeControlMethod is the vendor-namespaced method sent before a
// continuation call: no protocol release can claim a "_"-prefixed name, so
// the code the runtime answers it with is its "unimplemented" code.
const NegativeControlMethod = "_acpdrive.dev/probe/unimplemented"

// maxCreationHold bounds the wait before loading a session created in the
// current UTC minute.
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

// CreationStore remembers when sessions were created, for the
// creation-minute hold (docs/behaviour.md#continuation): some runtimes
// store sessions under minute-resolution names and destroy a session
// loaded in the minute it was created. Only the current minute matters, so
// a store may forget older entries.
type CreationStore interface {
	// Remember records that id was created at at.
	Remember(id string, at time.Time)
	// CreatedAt returns when id was created, if remembered.
	CreatedAt(id string) (time.Time, bool)
}

// MemoryCreations is the in-memory CreationStore of one process. It keeps
// only the entries of the latest UTC minute it was told of: a session
// created in an earlier minute is never held (holdFor), so the store holds
// at most one minute of creations however many sessions the process
// creates, and forgetting costs nothing per entry. It is safe for
// concurrent use.
type MemoryCreations struct {
	mu     sync.Mutex
	minute time.Time // the latest UTC minute an entry was created in
	at     map[string]time.Time
}

// NewMemoryCreations returns an empty store.
func NewMemoryCreations() *MemoryCreations {
	return &MemoryCreations{at: make(map[string]time.Time)}
}

// Remember records id. An entry of a later UTC minute than the store's
// drops every earlier entry at once.
func (m *MemoryCreations) Remember(id string, at time.Time) {
	at = at.UTC()
	minute := at.Truncate(time.Minute)
	m.mu.Lock()
	defer m.mu.Unlock()
	if minute.After(m.minute) {
		m.minute = minute
		if len(m.at) > 0 {
			m.at = make(map[string]time.Time)
		}
	}
	m.at[id] = at
}

// CreatedAt returns when id was created.
func (m *MemoryCreations) CreatedAt(id string) (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.at[id]
	return t, ok
}

// Len is the number of entries kept.
func (m *MemoryCreations) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.at)
}

// ContinuationRoute is the continuation method a runtime that advertised
// this is continued through, in the fixed order of
// docs/behaviour.md#continuation: session/load when loadSession is true,
// else session/resume when advertised, else "" (only session/new).
func ContinuationRoute(adv domain.Advertised) string {
	switch {
	case adv.LoadSession:
		return acpwire.MethodSessionLoad
	case adv.Resume:
		return acpwire.MethodSessionResume
	}
	return ""
}

// continuation is the continuation part of a session: it decides whether
// and how a saved session is continued, sends the negative control, runs
// the creation-minute hold and confirms a load by its replay. It owns the
// control's answer.
type continuation struct {
	client      *acpclient.Client
	clock       ports.Clock
	log         *slog.Logger
	creations   CreationStore
	stream      *eventStream
	readTimeout time.Duration
	proto       protocol // how the version in use continues a session

	control NegativeControl
	answer  acpwire.ContinueSessionResponse // the continuation call's answer
}

// continueSession runs the negative control and then the continuation
// call; it returns nil only when the continuation is confirmed.
func (c *continuation) continueSession(ctx context.Context, route string, req acpwire.LoadSessionRequest) error {
	c.control = c.negativeControl(ctx)
	if !c.control.Answered {
		return fmt.Errorf("the negative control was not answered: %s", c.control.Failure)
	}
	var watch *replayWatch
	if hold, replay := c.proto.continuation(route); replay {
		if hold {
			c.holdForCreationMinute(ctx, req.SessionID)
		}
		watch = newReplayWatch(req.SessionID)
		c.stream.watchReplay(watch)
		defer c.stream.watchReplay(nil)
	}
	callCtx, cancel := context.WithTimeout(ctx, c.readTimeout)
	answer, err := c.proto.continueCall(callCtx, c.client, route, req, watch)
	cancel()
	c.answer = answer
	if err != nil {
		c.logControlComparison(route, req.SessionID, err)
		return fmt.Errorf("%s failed: %w", route, err)
	}
	if watch != nil {
		deadline := c.clock.After(c.readTimeout)
		select {
		case <-watch.seen:
		case <-deadline:
			return fmt.Errorf("%s answered success but replayed no message for %q within %s", route, req.SessionID, c.readTimeout)
		case <-ctx.Done():
			return ctx.Err()
		}
		watch.settle(ctx, c.clock, deadline)
	}
	return nil
}

// negativeControl sends the vendor-namespaced control request and records
// the answer, bounded by read_timeout_ms.
func (c *continuation) negativeControl(ctx context.Context) NegativeControl {
	nc := NegativeControl{Sent: true}
	callCtx, cancel := context.WithTimeout(ctx, c.readTimeout)
	defer cancel()
	_, err := c.client.Extension(callCtx, NegativeControlMethod)
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
	c.log.Debug("negative control answered", "method", NegativeControlMethod, "answered", nc.Answered,
		"code", codeAttr(nc.Code), "result", nc.Result)
	return nc
}

// logControlComparison tells an operator whether a failed continuation
// call looks unimplemented (the runtime answers it the way it answers an
// unknown method) or broken (it answers differently).
func (c *continuation) logControlComparison(route, id string, err error) {
	var rpcErr *jsonrpc.Error
	verdict := "unanswered"
	callCode := ""
	if errors.As(err, &rpcErr) {
		callCode = fmt.Sprint(rpcErr.Code)
		verdict = "broken"
		if c.control.Code != nil && *c.control.Code == rpcErr.Code {
			verdict = "unimplemented"
		}
	}
	c.log.Warn("session continuation call failed", "route", route, "session_id", id,
		"call_code", callCode, "control_code", codeAttr(c.control.Code), "verdict", verdict, "error", err)
}

func codeAttr(code *int64) string {
	if code == nil {
		return ""
	}
	return fmt.Sprint(*code)
}

// holdForCreationMinute waits, for a session the store remembers, until
// the clock of this host leaves the UTC minute of its creation (bounded at
// one minute).
func (c *continuation) holdForCreationMinute(ctx context.Context, id string) {
	if c.creations == nil {
		return
	}
	at, ok := c.creations.CreatedAt(id)
	if !ok {
		return
	}
	wait := holdFor(at, c.clock.Now())
	if wait <= 0 {
		return
	}
	c.log.Info("holding session/load until the UTC minute of the session's creation has passed",
		"session_id", id, "wait", wait)
	select {
	case <-c.clock.After(wait):
	case <-ctx.Done():
	}
}

// holdFor is how long a load at now waits for a session created at
// created: until the next UTC minute starts, at most maxCreationHold.
func holdFor(created, now time.Time) time.Duration {
	leave := created.UTC().Truncate(time.Minute).Add(time.Minute)
	return min(leave.Sub(now), maxCreationHold)
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
