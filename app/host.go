package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/domain"
)

// DefaultSessionsPerProcess is how many sessions one runtime process of a
// Host carries when HostOptions.SessionsPerProcess is 0
// (docs/behaviour.md#runtime-host).
const DefaultSessionsPerProcess = 10

// MsgHostNeedsClose is the message of a session refused on a shared
// process because the runtime does not advertise session/close
// (docs/behaviour.md#runtime-host).
const MsgHostNeedsClose = "the runtime does not advertise session/close; a session cannot share its process"

// ErrCannotShare is the cause of a session refused on a shared process
// because its runtime cannot share one: it does not advertise
// session/close, or the session follows subagents. Test for it with
// errors.Is; a Fleet then gives such a runtime's sessions a process each
// (docs/behaviour.md#fleet).
const ErrCannotShare = Cause("the runtime cannot share a process")

// Cause is the typed cause of a start a Host or a Fleet refused, wrapped
// by the *domain.AgentError it returns: test for one of its constants
// with errors.Is, never by the message (docs/behaviour.md#fleet).
type Cause string

// Error implements error.
func (c Cause) Error() string { return "app: " + string(c) }

// MsgHostFull is the message of a session refused because every process
// of the host is full and the host may start no other
// (docs/behaviour.md#runtime-host).
const MsgHostFull = "every runtime process of the host carries its cap of sessions"

// MsgHostClosed is the message of a session asked of a closed host.
const MsgHostClosed = "the runtime host is closed"

// HostOptions are a Host's caps and keep-warm time
// (docs/behaviour.md#runtime-host).
type HostOptions struct {
	// SessionsPerProcess caps the sessions one process carries at once;
	// 0 means DefaultSessionsPerProcess.
	SessionsPerProcess int
	// MaxProcesses caps the processes the host runs at once; 0 means no cap.
	MaxProcesses int
	// KeepWarm is how long a process that carries no session is kept
	// running for the next one; 0 stops it when its last session stops.
	KeepWarm time.Duration
	// EventBacklog bounds the deliveries one session may have waiting for
	// its consumers while the process's reader goes on for the others; 0
	// means DefaultEventBacklog. Past it, the session's running turn ends
	// turn_outcome_unknown and the rest of that turn's events are dropped
	// (docs/behaviour.md#runtime-host).
	EventBacklog int
}

// Host runs runtime processes on which many sessions share one process and
// its connection (docs/behaviour.md#runtime-host): each session created
// through Host.Start is a full *Session (its own turns, events, ledger,
// tool records, reply and capability record) routed by its session id;
// its Stop ends that session only, through session/close. A process lives
// while it carries sessions, then HostOptions.KeepWarm longer. A Host is
// safe for concurrent use; Close stops every session and process.
type Host struct {
	opts  Options // resolved: the process's scope of every connection
	hopts HostOptions
	log   *slog.Logger

	mu     sync.Mutex
	procs  []*hostProc
	closed bool
	wg     sync.WaitGroup // watchers and keep-warm timers
}

// NewHost returns a host whose processes are started with opts' Launcher,
// Settings.Command, Settings.Protocol, Settings.Sandbox (with
// Settings.Session.AdditionalDirectories writable in it) and Workspace
// (the process's directory). It starts nothing until the first Host.Start.
func NewHost(opts Options, hopts HostOptions) (*Host, error) {
	o, err := opts.resolved()
	if err != nil {
		return nil, err
	}
	if o.VerifyCredential {
		return nil, &OptionsError{Field: "VerifyCredential", Reason: "is not offered on a shared process"}
	}
	if hopts.SessionsPerProcess <= 0 {
		hopts.SessionsPerProcess = DefaultSessionsPerProcess
	}
	if hopts.EventBacklog <= 0 {
		hopts.EventBacklog = DefaultEventBacklog
	}
	return &Host{opts: o, hopts: hopts, log: o.Logger.With("component", "acp_host")}, nil
}

// hostProc is one connection of a host and the sessions it carries.
type hostProc struct {
	conn *connection

	ready chan struct{} // closed once the launch finished; err then says how
	err   error

	// Guarded by Host.mu.
	seated  int                   // sessions seated or being created
	members map[*Session]struct{} // sessions created on it
	dead    bool                  // the connection ended: nothing more is placed on it
	retired bool
	wake    chan struct{} // closed to end the keep-warm wait; nil when none runs
}

// Start opens a session on a shared runtime process: a process of the
// host with room, or a new one. opts gives the session's own part
// (OnEvent, Workspace as its cwd, the session settings, continuation,
// policies, observers); the process's part is the host's, and a process
// option set to anything else than the host's (Launcher, Settings.Command,
// Settings.Protocol, Settings.Sandbox, Settings.Hosts,
// MeasurementSources, VerifyCredential, ClientName, ClientVersion) is
// refused with an *OptionsError, never dropped. Leaving them zero takes
// the host's. Measurement sources that read a per-process journal are not
// used: token counts come from the wire or not at all. A runtime that
// does not advertise session/close is refused (agent_not_found, reason
// not_offered, cause ErrCannotShare; a Fleet then gives it a process per
// session).
func (h *Host) Start(ctx context.Context, opts Options) (*Session, error) {
	return h.start(ctx, opts, nil)
}

// start is Start on into, a stopped session whose runtime a retry
// replaces in place (Session.replaceRuntime), or on a new session when
// into is nil.
func (h *Host) start(ctx context.Context, opts Options, into *Session) (*Session, error) {
	if err := h.sessionScope(&opts); err != nil {
		return nil, err
	}
	o, err := opts.resolved()
	if err != nil {
		return nil, refused(o, err)
	}
	if o.Settings.Subagents {
		return nil, refused(o, domain.WrapError(domain.KindAgentNotFound, "following subagents is not offered on a shared process", ErrCannotShare).WithReason(domain.ReasonNotOffered))
	}
	p, err := h.place(ctx)
	if err != nil {
		return nil, err
	}
	obs := observe(ctx, o.Observers, o.Clock.Now())
	s := into
	if s == nil {
		s = newSession(p.conn, o, obs)
	} else {
		s.assemble(p.conn, o, obs)
	}
	s.home = h
	h.mu.Lock()
	p.members[s] = struct{}{}
	h.mu.Unlock()
	if err := s.seat(ctx); err != nil {
		s.fail(ctx, err)
		return nil, err
	}
	s.log.Info("agent session created on a shared process", "session_id", s.ID(), "agent_pid", s.PID())
	s.opened(obs)
	return s, nil
}

// place seats one session on a process with room, starting one when none
// has room and the cap allows; it waits for a process being started.
func (h *Host) place(ctx context.Context) (*hostProc, error) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, domain.NewError(domain.KindAgentNotFound, MsgHostClosed).WithReason(domain.ReasonNotOffered)
	}
	var p *hostProc
	for _, c := range h.procs {
		if !c.dead && !c.retired && c.seated < h.hopts.SessionsPerProcess && !c.ended() {
			p = c
			break
		}
	}
	launch := false
	if p == nil {
		if h.hopts.MaxProcesses > 0 && len(h.procs) >= h.hopts.MaxProcesses {
			h.mu.Unlock()
			return nil, domain.NewError(domain.KindAgentNotFound, MsgHostFull).WithReason(domain.ReasonNotOffered)
		}
		p = &hostProc{ready: make(chan struct{}), members: map[*Session]struct{}{}}
		h.procs = append(h.procs, p)
		launch = true
	}
	p.seated++
	if p.wake != nil {
		close(p.wake)
		p.wake = nil
	}
	h.mu.Unlock()
	if launch {
		p.err = h.launch(ctx, p)
		close(p.ready)
		if p.err != nil {
			h.mu.Lock()
			h.drop(p)
			h.mu.Unlock()
		}
	}
	select {
	case <-p.ready:
	case <-ctx.Done():
		h.unseat(p)
		return nil, domain.WrapError(domain.KindTurnCancelled, msgStartCancelled, ctx.Err())
	}
	if p.err != nil {
		return nil, p.err
	}
	return p, nil
}

// ended reports whether p's connection ended (before its watcher saw it).
func (p *hostProc) ended() bool { return isDone(p.ready) && p.err == nil && p.conn.rt.ended() }

// drop removes p from the processes sessions are placed on. h.mu is held.
func (h *Host) drop(p *hostProc) {
	for i, c := range h.procs {
		if c == p {
			h.procs = append(h.procs[:i], h.procs[i+1:]...)
			return
		}
	}
}

// launch opens one shared connection, the steps of Start's own
// (prepare, launch, handshake); a runtime that does not advertise
// session/close is stopped and refused.
func (h *Host) launch(ctx context.Context, p *hostProc) error {
	c := newConnection(h.opts, true)
	c.keeper, c.backlog = hostKeeper{h: h, p: p}, h.hopts.EventBacklog
	p.conn = c
	plan, err := c.prepare(nil)
	if err != nil {
		return err
	}
	// The process outlives the start that asked for it.
	if err := c.launch(context.WithoutCancel(ctx), plan, nil); err != nil {
		return err
	}
	err = c.handshake(ctx)
	if err == nil && !c.agent.Advertised.Close {
		err = domain.WrapError(domain.KindAgentNotFound, MsgHostNeedsClose, ErrCannotShare).WithReason(domain.ReasonNotOffered)
	}
	if err != nil {
		h.stopProc(p)
		return err
	}
	h.log.Info("shared agent process started", "agent_pid", c.rt.pid(), "agent_name", c.agent.Name, "agent_version", c.agent.Version)
	h.wg.Add(1)
	go h.watch(p)
	return nil
}

// watch marks p dead once its connection ended: no session is placed on
// it any more; its sessions' turns end port_exit through their own
// connection checks (docs/behaviour.md#runtime-host).
func (h *Host) watch(p *hostProc) {
	defer h.wg.Done()
	select {
	case <-p.conn.rt.conn.Done():
	case <-p.conn.rt.stopping:
		return
	}
	h.mu.Lock()
	p.dead = true
	h.drop(p)
	idle := p.seated == 0 && !p.retired
	if idle {
		p.retired = true
	}
	h.mu.Unlock()
	h.log.Info("shared agent process ended", "agent_pid", p.conn.rt.pid())
	if idle {
		h.stopProc(p)
	}
}

// stopProc tears a connection that carries no session down in the fixed
// order.
func (h *Host) stopProc(p *hostProc) {
	if err := p.conn.shutdown(); err != nil {
		h.log.Warn("teardown of a shared agent process reported", "agent_pid", p.conn.rt.pid(), "error", err)
	}
}

// hostKeeper is the keeper of a host's connection.
type hostKeeper struct {
	h *Host
	p *hostProc
}

// release gives back the seat of s, which left p: p is torn down now
// when it carries no session and is not kept warm.
func (k hostKeeper) release(s *Session) bool {
	k.h.mu.Lock()
	delete(k.p.members, s)
	k.h.mu.Unlock()
	return k.h.release(k.p)
}

// unseat gives back one seat of p that no session took (a start that was
// cancelled while the process started); a process left without sessions
// is kept warm or stopped.
func (h *Host) unseat(p *hostProc) {
	if h.release(p) {
		h.stopProc(p)
	}
}

// release gives back one seat of p and says whether p is to be torn down
// now; a process kept warm gets its timer.
func (h *Host) release(p *hostProc) (stop bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	p.seated--
	if p.seated > 0 || p.retired || !isDone(p.ready) || p.err != nil {
		if p.seated == 0 && p.err != nil {
			p.retired = true
		}
		return false
	}
	if p.dead || h.closed || h.hopts.KeepWarm <= 0 {
		p.retired = true
		h.drop(p)
		return true
	}
	wake := make(chan struct{})
	p.wake = wake
	h.wg.Add(1)
	go h.keepWarm(p, wake)
	return false
}

// keepWarm stops p after HostOptions.KeepWarm unless a session was seated
// on it (or the host closed) first.
func (h *Host) keepWarm(p *hostProc, wake chan struct{}) {
	defer h.wg.Done()
	select {
	case <-wake:
		return
	case <-h.opts.Clock.After(h.hopts.KeepWarm):
	}
	h.mu.Lock()
	if p.wake != wake || p.seated > 0 || p.retired {
		h.mu.Unlock()
		return
	}
	p.wake, p.retired = nil, true
	h.drop(p)
	h.mu.Unlock()
	h.stopProc(p)
}

// Processes reports the processes the host runs: each local process id
// (0 on a remote host) and the sessions it carries.
func (h *Host) Processes() []HostProcess {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]HostProcess, 0, len(h.procs))
	for _, p := range h.procs {
		if isDone(p.ready) && p.err == nil && !p.ended() {
			out = append(out, HostProcess{PID: p.conn.rt.pid(), Sessions: p.seated})
		}
	}
	return out
}

// HostProcess is one process of a Host as Host.Processes reports it.
type HostProcess struct {
	// PID is the local process id, 0 when none is watched.
	PID int
	// Sessions is how many sessions it carries.
	Sessions int
}

// Close stops every session of the host, then every process, bounded by
// ctx as Session.Stop is; a later Start is refused.
func (h *Host) Close(ctx context.Context) error {
	h.mu.Lock()
	h.closed = true
	var members []*Session
	var warm []*hostProc
	for _, p := range h.procs {
		for s := range p.members {
			members = append(members, s)
		}
		if p.seated == 0 && !p.retired && isDone(p.ready) && p.err == nil {
			if p.wake != nil {
				close(p.wake)
			}
			p.wake, p.retired = nil, true
			warm = append(warm, p)
		}
	}
	h.mu.Unlock()
	errs := make([]error, len(members))
	var wg sync.WaitGroup
	for i, s := range members {
		wg.Go(func() { errs[i] = s.Stop(ctx) })
	}
	wg.Wait()
	for _, p := range warm {
		h.stopProc(p)
	}
	done := make(chan struct{})
	go func() { h.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		errs = append(errs, fmt.Errorf("app: host close did not finish before its context ended: %w", ctx.Err()))
	}
	return errors.Join(errs...)
}
