package app

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/acpdrive/acpdrive/domain"
)

// Replacement is what became of one replacement of a session's runtime:
// a retry whose process was gone starts the runtime again under the same
// *Session value, resuming the session when the runtime can
// (docs/behaviour.md#fleet).
type Replacement struct {
	// Attempt is the retry the replacement was made for, from 1; 0 for
	// the replacement of a session whose shared process another session
	// ended (Isolated).
	Attempt int `json:"attempt"`
	// Requested is the id of the session that was to be resumed.
	Requested string `json:"requested"`
	// SessionID is the id of the session that runs now: Requested when
	// resumed, a new one when not.
	SessionID string `json:"session_id,omitempty"`
	// Resumed reports that the history was kept (the runtime resumed the
	// session); false: the session runs fresh, without its earlier turns.
	Resumed bool `json:"resumed"`
	// Reason says why the session was not resumed; "" when it was.
	Reason string `json:"reason,omitempty"`
	// Isolated reports a session moved to a process of its own because
	// the shared process it was on ended under it.
	Isolated bool `json:"isolated,omitempty"`
	// Err is set when the runtime could not be started again: the
	// session is then stopped.
	Err error `json:"-"`
}

// Text is the replacement in one line, as the CLI prints it.
func (r Replacement) Text() string {
	where := "on a new process"
	if r.Isolated {
		where = "on a process of its own (its shared process ended under it)"
	}
	switch {
	case r.Err != nil:
		return "the session could not be started again " + where + ": " + r.Err.Error()
	case r.Resumed:
		return MsgSessionResumed + " " + where + "; its history is kept"
	}
	return MsgSessionFresh + " " + where + ", without its earlier turns: " + r.Reason
}

// MsgSessionResumed begins the message of a session_replaced event whose
// session was resumed (docs/behaviour.md#fleet).
const MsgSessionResumed = "resumed: the session was resumed"

// MsgSessionFresh begins the message of a session_replaced event whose
// session could not be resumed and runs fresh (docs/behaviour.md#fleet).
const MsgSessionFresh = "fresh: the session could not be resumed and runs as a new session"

// replaceRuntime stops s's runtime and starts it again under the same
// value, resuming s's session (docs/behaviour.md#fleet): through the Host
// that placed s, or on a process of its own when s was on one, when
// isolate asks for one, or when with gives other options to start with.
// The session's totals and queued steers are kept; its event and a
// notification when it runs fresh say what became of its history.
func (s *Session) replaceRuntime(ctx context.Context, with *Options, isolate bool) (Replacement, error) {
	id := s.ID()
	ctx, ok := s.swap.begin(ctx)
	if !ok {
		err := domain.NewError(domain.KindTurnCancelled, domain.MsgSessionStopped)
		return Replacement{Requested: id, Isolated: isolate, Err: err}, err
	}
	defer s.swap.end()
	opts := s.opts
	if with != nil {
		opts = *with
	}
	opts.ResumeSessionID, opts.ForkSessionID, opts.VerifyCredential = id, "", false
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopGrace(s.opts.Settings)+failedStartStopMargin)
	if err := s.conn.leave(stopCtx, s); err != nil {
		s.log.Debug("the replaced runtime's stop reported", "error", err)
	}
	cancel()
	<-s.life.done // every step of the teardown is bounded: nothing uses s after it
	home := s.home
	if isolate || with != nil {
		home = nil
	}
	rep := Replacement{Requested: id, Isolated: isolate}
	var err error
	if home != nil {
		_, err = home.start(ctx, opts, s)
	} else {
		var o Options
		if o, err = opts.resolved(); err == nil {
			obs := observe(ctx, o.Observers, o.Clock.Now())
			_, err = startOwn(ctx, o, obs, func(c *connection) *Session {
				<-s.life.done
				s.assemble(c, o, obs)
				s.home = nil
				return s
			})
		}
	}
	if err != nil {
		rep.Err = err
		s.log.Warn("the session's runtime could not be started again", "session_id", id, "error", err)
		return rep, err
	}
	rep.SessionID = s.ID()
	if c, ok := s.Continuation(); ok {
		rep.Resumed, rep.Reason = c.Continued, c.Reason
	}
	if !rep.Resumed {
		// Never silently: the retry runs without the turns before it
		// (docs/behaviour.md#retrying).
		s.log.Warn("the retry could not resume the session; it runs on a new one", "session_id", id, "reason", rep.Reason)
		s.stream.emit(domain.Event{Type: domain.EventNotification, Message: MsgRetryFreshSession + rep.Reason, Origin: domain.OriginAcpdrive})
	}
	s.stream.emit(domain.Event{Type: domain.EventSessionReplaced, SessionID: s.ID(), Message: rep.Text(), Origin: domain.OriginAcpdrive})
	return rep, nil
}

// sharedProcessEnded reports whether res failed because the shared
// process s was on ended: another session's turn may have ended it, so s
// runs its turn again on a process of its own (docs/behaviour.md#fleet).
func (s *Session) sharedProcessEnded(res domain.TurnResult) bool {
	return s.home != nil && s.conn.shared() && s.processGone(res)
}

// swapGuard lets Stop and Steer, called from other goroutines, wait out a
// replacement of the session's runtime: until it ends, the session's
// parts are being made again (docs/behaviour.md#fleet).
type swapGuard struct {
	closed atomic.Bool // Stop was called: no replacement begins

	mu      sync.Mutex
	running chan struct{}      // closed when the replacement ends; nil when none runs
	cancel  context.CancelFunc // cancels the replacement's start
}

// begin marks a replacement running; false when the session was stopped.
// The context returned is cancelled by a Stop meanwhile.
func (g *swapGuard) begin(ctx context.Context) (context.Context, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed.Load() {
		return ctx, false
	}
	ctx, g.cancel = context.WithCancel(ctx)
	g.running = make(chan struct{})
	return ctx, true
}

// end marks the replacement ended.
func (g *swapGuard) end() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.cancel()
	close(g.running)
	g.running, g.cancel = nil, nil
}

// wait waits for a running replacement to end, within ctx; closing (a
// Stop) cancels its start first and keeps any other from beginning.
func (g *swapGuard) wait(ctx context.Context, closing bool) error {
	if closing {
		g.closed.Store(true)
	}
	g.mu.Lock()
	running, cancel := g.running, g.cancel
	g.mu.Unlock()
	if running == nil {
		return nil
	}
	if closing {
		cancel()
	}
	select {
	case <-running:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
