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
	"github.com/acpdrive/acpdrive/protocol/acpwire"
	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

// DefaultSessionsPerProcess is how many sessions one runtime process of a
// Host carries when HostOptions.SessionsPerProcess is 0
// (docs/behaviour.md#runtime-host).
const DefaultSessionsPerProcess = 10

// MsgHostNeedsClose is the message of a session refused on a shared
// process because the runtime does not advertise session/close
// (docs/behaviour.md#runtime-host).
const MsgHostNeedsClose = "the runtime does not advertise session/close; a session cannot share its process"

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
}

// Host runs runtime processes on which many sessions share one process and
// its connection (docs/behaviour.md#runtime-host): each session created
// through Host.Start is a full *Session (its own turns, events, ledger,
// tool records, reply and capability record) routed by its session id;
// its Stop ends that session only, through session/close. A process lives
// while it carries sessions, then HostOptions.KeepWarm longer. A Host is
// safe for concurrent use; Close stops every session and process.
type Host struct {
	opts  Options // resolved: the launcher, command and protocol of every process
	hopts HostOptions
	log   *slog.Logger

	mu     sync.Mutex
	procs  []*hostProc
	closed bool
	wg     sync.WaitGroup // seat teardowns and keep-warm timers
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
	if hopts.SessionsPerProcess <= 0 {
		hopts.SessionsPerProcess = DefaultSessionsPerProcess
	}
	return &Host{opts: o, hopts: hopts, log: o.Logger.With("component", "acp_host")}, nil
}

// hostProc is one runtime process of a host and the sessions it carries.
type hostProc struct {
	rt     *runtime
	router *router
	agent  domain.AgentInfo

	ready chan struct{} // closed once the launch finished; err then says how
	err   error

	// Guarded by Host.mu.
	seated  int                   // sessions seated or being created
	members map[*Session]struct{} // sessions created on it
	dead    bool                  // the connection ended: nothing more is placed on it
	retired bool
	wake    chan struct{} // closed to end the keep-warm wait; nil when none runs
}

// Start creates a session on a shared runtime process: a process of the
// host with room, or a new one. opts gives the session's own part (OnEvent,
// Workspace as its cwd, the session settings, continuation, policies,
// observers); the process's part is the host's. Measurement sources that
// read a per-process journal are not used: token counts come from the
// wire or not at all. A runtime that does not advertise session/close is
// refused (agent_not_found, reason not_offered).
func (h *Host) Start(ctx context.Context, opts Options) (*Session, error) {
	opts.Launcher = h.opts.Launcher
	opts.Settings.Command = h.opts.Settings.Command
	opts.Settings.Protocol = h.opts.Settings.Protocol
	opts.MeasurementSources = nil
	opts.VerifyCredential = false
	o, err := opts.resolved()
	if err != nil {
		return nil, refused(o, err)
	}
	p, err := h.place(ctx)
	if err != nil {
		return nil, err
	}
	obs := observe(ctx, o.Observers, o.Clock.Now())
	s := newSession(o, obs)
	s.rt = p.rt
	s.seat = &seat{host: h, proc: p, done: make(chan struct{})}
	h.mu.Lock()
	p.members[s] = struct{}{}
	h.mu.Unlock()
	if err := s.seatOn(ctx, p); err != nil {
		s.replaced = true
		s.seat.leave(s, true)
		if oe := (*OptionsError)(nil); !errors.As(err, &oe) {
			s.stream.emit(domain.Event{Type: domain.EventStartupFailed, Message: failureMessage(err), AgentPID: s.PID()})
		}
		s.obs.end(s.clock.Now(), s.Capabilities(), err)
		return nil, err
	}
	s.log.Info("agent session created on a shared process", "session_id", s.ID(), "agent_pid", s.PID())
	obs.start(ports.SessionInfo{
		At: s.clock.Now(), SessionID: s.ID(), Agent: s.agent, Route: s.route,
		Capabilities: s.Capabilities(), Remote: s.rt.target.Remote(),
	})
	return s, nil
}

// seatOn runs the start-up steps a session has of its own on a running
// process: its tool servers, the handshake's record, the session itself
// (created or continued) and the confirmation of its tools.
func (s *Session) seatOn(ctx context.Context, p *hostProc) error {
	if s.opts.Settings.Subagents {
		return domain.NewError(domain.KindAgentNotFound, "following subagents is not offered on a shared process").WithReason(domain.ReasonNotOffered)
	}
	s.caps.reset(p.rt.target.Remote(), false)
	servers, err := s.loadMCPServers(ctx)
	if err == nil {
		servers, err = s.armBeacon(ctx, servers)
	}
	if err == nil {
		servers, err = s.armResult(ctx, servers)
	}
	if err != nil {
		return err
	}
	s.servers = servers
	part, ok := partFor(p.agent.ProtocolVersion)
	if !ok {
		return domain.NewError(domain.KindAgentNotFound, fmt.Sprintf("acpdrive does not speak protocol version %d", p.agent.ProtocolVersion)).WithReason(domain.ReasonProtocolUnsupported)
	}
	s.proto.Store(&protocolRef{part.make(s)})
	s.handshakeInfo(p.agent)
	s.endWith = acpwire.MethodSessionClose
	ch := &connHandler{
		log: s.log, rt: s.rt, stream: s.stream, turns: s.turns,
		readTimeout: s.opts.Settings.EffectiveReadTimeout(), onIdle: s.opts.OnReadIdle, sessionID: s.ID,
		perm: newPermissionJudge(s.opts, p.rt.target.Remote(), s.stream.announcedTitle),
	}
	p.router.begin()
	defer p.router.end()
	if id := s.opts.ResumeSessionID; id != "" {
		// A continuation's replay arrives before its answer: the route is
		// taken before it is asked for.
		p.router.add(id, s, ch)
	}
	// A created or forked session's route is taken as soon as its id is
	// adopted, before its configuration calls: what the runtime sends for
	// it from then on is its own, as on a process of its own.
	s.seat.onID = func(id string) { p.router.add(id, s, ch) }
	err = s.resolve(ctx)
	if resumed := s.opts.ResumeSessionID; resumed != "" && s.ID() != "" && s.ID() != resumed {
		// The continuation fell back to a new session, whose route adopt
		// took: the old id routes nothing.
		p.router.remove(resumed)
	}
	if err == nil {
		err = s.confirmToolServers(ctx)
	}
	return err
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
func (p *hostProc) ended() bool { return isDone(p.ready) && p.err == nil && p.rt.ended() }

// drop removes p from the processes sessions are placed on. h.mu is held.
func (h *Host) drop(p *hostProc) {
	for i, c := range h.procs {
		if c == p {
			h.procs = append(h.procs[:i], h.procs[i+1:]...)
			return
		}
	}
}

// launch starts one process and performs the handshake on it; a runtime
// that does not advertise session/close is stopped and refused.
func (h *Host) launch(ctx context.Context, p *hostProc) error {
	o := h.opts
	set := o.Settings
	p.router = newRouter(h.log)
	p.rt = newRuntime(h.log, o.Clock, o.drainBound)
	readTimeout := set.EffectiveReadTimeout()
	p.router.refuse = func(req jsonrpc.Request) {
		ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
		defer cancel()
		if err := p.rt.client.ReplyError(ctx, req, jsonrpc.CodeInvalidParams, "unknown session"); err != nil {
			h.log.Debug("could not answer an agent request", "method", req.Method, "error", err)
		}
	}
	plan, err := o.Launcher.Prepare(ports.LaunchRequest{Command: set.Command, Workspace: o.Workspace, Sandbox: set.Sandbox,
		AddDirs: set.Session.AdditionalDirectories})
	if err != nil {
		return keepKind(err, msgStartFailed)
	}
	p.rt.target = plan.Target()
	// The process outlives the start that asked for it.
	if err := p.rt.start(context.WithoutCancel(ctx), plan, nil, p.router, p.router.betweenTurns); err != nil {
		return err
	}
	b := newSession(o, nil)
	b.rt = p.rt
	err = b.initialize(ctx)
	if err == nil && !b.agent.Advertised.Close {
		err = domain.NewError(domain.KindAgentNotFound, MsgHostNeedsClose).WithReason(domain.ReasonNotOffered)
	}
	if err != nil {
		h.stopProc(p)
		return err
	}
	p.agent = b.agent
	h.log.Info("shared agent process started", "agent_pid", p.rt.pid(), "agent_name", p.agent.Name, "agent_version", p.agent.Version)
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
	case <-p.rt.conn.Done():
	case <-p.rt.stopping:
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
	h.log.Info("shared agent process ended", "agent_pid", p.rt.pid())
	if idle {
		h.stopProc(p)
	}
}

// stopProc tears a process down in the fixed order (no session of its own
// to close: each closed its own).
func (h *Host) stopProc(p *hostProc) {
	td := teardownSteps{drained: func() {}, step: func(string, time.Time, time.Time, error) {}}
	if err := p.rt.stop(context.Background(), h.opts.Settings.StopGrace, td, func(error) {}); err != nil {
		h.log.Warn("teardown of a shared agent process reported", "agent_pid", p.rt.pid(), "error", err)
	}
}

// unseat gives back one seat of p; a process left without sessions is
// kept warm or stopped.
func (h *Host) unseat(p *hostProc) {
	h.mu.Lock()
	p.seated--
	if p.seated > 0 || p.retired || !isDone(p.ready) {
		h.mu.Unlock()
		return
	}
	if p.err != nil {
		p.retired = true
		h.mu.Unlock()
		return
	}
	if p.dead || h.closed || h.hopts.KeepWarm <= 0 {
		p.retired = true
		h.drop(p)
		h.mu.Unlock()
		h.stopProc(p)
		return
	}
	wake := make(chan struct{})
	p.wake = wake
	h.wg.Add(1)
	h.mu.Unlock()
	go h.keepWarm(p, wake)
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
			out = append(out, HostProcess{PID: p.rt.pid(), Sessions: p.seated})
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
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.Stop(ctx)
		}()
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

// seat is a session's place on a host's shared process.
type seat struct {
	host *Host
	proc *hostProc
	// onID takes the session's route once its id is adopted (seatOn).
	onID func(id string)
	once sync.Once
	done chan struct{}
	err  error
}

// stop ends the session only, in a goroutine the host owns: the running
// turn is cancelled, session/close is sent (bounded at half the stop
// grace), the route is removed and the seat given back
// (docs/behaviour.md#runtime-host).
func (st *seat) stop(ctx context.Context, s *Session) error {
	st.once.Do(func() {
		st.host.wg.Add(1)
		go func() {
			defer st.host.wg.Done()
			defer close(st.done)
			st.leave(s, true)
		}()
	})
	select {
	case <-st.done:
		return st.err
	case <-ctx.Done():
		return fmt.Errorf("app: stop did not finish before its context ended; teardown goes on: %w", ctx.Err())
	}
}

// leave ends s on its process; closeIt sends session/close when the
// connection is alive.
func (st *seat) leave(s *Session, closeIt bool) {
	began := s.clock.Now()
	rt := st.proc.rt
	grace := s.opts.Settings.StopGrace
	if grace <= 0 {
		grace = domain.DefaultStopGrace
	}
	s.turns.endRunning(ending{err: domain.NewError(domain.KindTurnCancelled, domain.MsgSessionStopped)})
	if id := s.ID(); closeIt && id != "" && !rt.ended() && !isDone(rt.conn.Broken()) {
		rt.closeThroughProtocol(acpwire.MethodSessionClose, id, grace/2)
		s.obs.step(ports.StepCloseSession, "", began, s.clock.Now(), nil)
	}
	st.proc.router.remove(s.ID())
	s.turns.betweenTurns(s.stream.flush)
	s.meter.release()
	s.releaseBeacon()
	s.releaseResult()
	h := st.host
	h.mu.Lock()
	delete(st.proc.members, s)
	h.mu.Unlock()
	h.unseat(st.proc)
	if !s.replaced {
		s.obs.end(s.clock.Now(), s.Capabilities(), nil)
	}
}

// router is the shared connection's handler: it hands what the runtime
// sends to the session it names (docs/behaviour.md#runtime-host). A
// session's route is taken as soon as its id is known (see seatOn); what
// names a session not (yet) routed is held, bounded, until the route is
// added: notifications always (a session's first updates may arrive right
// after session/new's answer), requests only for a session the runtime
// has announced (session/new's or session/fork's answer was read: the
// route follows without waiting on the runtime). Any other request naming
// no routed session is refused at once. Its methods run on the
// connection's reader goroutine; deliveries happen under its lock, in wire
// order.
type router struct {
	log *slog.Logger
	// refuse answers a request no session takes -32602; set before the
	// connection starts.
	refuse func(req jsonrpc.Request)

	mu        sync.Mutex
	byID      map[string]route
	held      map[string][]held
	announced map[string]bool // ids answered by session/new or session/fork, not yet routed
	creating  int             // sessions being created, continued or forked
}

// held is one message kept for a session not yet routed: a notification
// to hand over, or a request to hand over or refuse.
type held struct {
	note func(*connHandler)
	req  *jsonrpc.Request
}

// route is one session's handler on the shared connection.
type route struct {
	s *Session
	h *connHandler
}

// Bounds on what the router holds for sessions not yet routed.
const (
	heldSessionsMax = 64
	heldPerSession  = 256
)

var (
	_ jsonrpc.Handler       = (*router)(nil)
	_ jsonrpc.IdleHandler   = (*router)(nil)
	_ jsonrpc.ResultHandler = (*router)(nil)
)

func newRouter(log *slog.Logger) *router {
	return &router{log: log, byID: map[string]route{}, held: map[string][]held{}, announced: map[string]bool{}}
}

// add routes id to s and delivers what was held for it.
func (r *router) add(id string, s *Session, h *connHandler) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.byID[id] = route{s: s, h: h}
	for _, m := range r.held[id] {
		if m.req != nil {
			h.HandleRequest(*m.req)
		} else {
			m.note(h)
		}
	}
	delete(r.held, id)
	delete(r.announced, id)
}

// remove drops id's route; a request held for it is refused.
func (r *router) remove(id string) {
	r.mu.Lock()
	delete(r.byID, id)
	reqs := r.dropLocked(id)
	r.mu.Unlock()
	r.refuseAll(reqs)
}

// begin counts a session being created, continued or forked; end ends
// that count. Once none is, the ids announced but never routed (a start
// that failed or was cancelled after the answer) are dropped, their held
// requests refused.
func (r *router) begin() {
	r.mu.Lock()
	r.creating++
	r.mu.Unlock()
}

func (r *router) end() {
	r.mu.Lock()
	r.creating--
	var reqs []jsonrpc.Request
	if r.creating == 0 {
		for id := range r.announced {
			reqs = append(reqs, r.dropLocked(id)...)
		}
	}
	r.mu.Unlock()
	r.refuseAll(reqs)
}

// dropLocked forgets what was held and announced for id and returns the
// held requests, to be refused once the lock is released.
func (r *router) dropLocked(id string) []jsonrpc.Request {
	var reqs []jsonrpc.Request
	for _, m := range r.held[id] {
		if m.req != nil {
			reqs = append(reqs, *m.req)
		}
	}
	delete(r.held, id)
	delete(r.announced, id)
	return reqs
}

func (r *router) refuseAll(reqs []jsonrpc.Request) {
	for _, req := range reqs {
		r.refuse(req)
	}
}

// HandleResult notes the session a session/new or session/fork answer
// announces: a request naming it is held for its route, which the session
// being started takes without waiting on the runtime.
func (r *router) HandleResult(method string, result json.RawMessage) {
	if method != acpwire.MethodSessionNew && method != acpwire.MethodSessionFork {
		return
	}
	var res struct {
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(result, &res) != nil || res.SessionID == "" {
		return
	}
	r.mu.Lock()
	if _, ok := r.byID[res.SessionID]; !ok && r.creating > 0 {
		r.announced[res.SessionID] = true
	}
	r.mu.Unlock()
}

// deliver hands a notification to id's session, or holds a copy of it
// (the reader reuses params' bytes once the handler returned).
func (r *router) deliver(id, method string, params json.RawMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rt, ok := r.byID[id]; ok {
		rt.h.HandleNotification(method, params)
		return
	}
	if !r.roomLocked(id) {
		r.log.Debug("dropped a message for a session not routed", "session_id", id)
		return
	}
	kept := append(json.RawMessage(nil), params...)
	r.held[id] = append(r.held[id], held{note: func(h *connHandler) { h.HandleNotification(method, kept) }})
}

// roomLocked reports whether one more message may be held for id.
func (r *router) roomLocked(id string) bool {
	_, ok := r.held[id]
	return (ok || len(r.held) < heldSessionsMax) && len(r.held[id]) < heldPerSession
}

// each runs f for every routed session.
func (r *router) each(f func(route)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rt := range r.byID {
		f(rt)
	}
}

// HandleNotification routes by the notification's sessionId.
func (r *router) HandleNotification(method string, params json.RawMessage) {
	r.deliver(requestSession(params), method, params)
}

// HandleRequest routes by the request's sessionId. A request naming a
// session the runtime announced but whose route is not taken yet is held
// for it (bounded); any other request naming no routed session is
// refused at once, never held open.
func (r *router) HandleRequest(req jsonrpc.Request) {
	id := requestSession(req.Params)
	r.mu.Lock()
	if rt, ok := r.byID[id]; ok {
		rt.h.HandleRequest(req)
		r.mu.Unlock()
		return
	}
	if r.announced[id] && r.roomLocked(id) {
		r.held[id] = append(r.held[id], held{req: &req})
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	r.refuse(req)
}

// HandleIdle tells every session's Options.OnReadIdle.
func (r *router) HandleIdle() { r.each(func(rt route) { rt.h.HandleIdle() }) }

// HandleMalformed reports the line to every session.
func (r *router) HandleMalformed(line []byte, err error) {
	r.each(func(rt route) { rt.h.HandleMalformed(line, err) })
}

// HandleOversize ends every session's running turn: the discarded line
// may have carried any of their answers.
func (r *router) HandleOversize(n int64) { r.each(func(rt route) { rt.h.HandleOversize(n) }) }

// betweenTurns reports what each session's stream still held once the
// shared stream ended.
func (r *router) betweenTurns() {
	var all []*Session
	r.each(func(rt route) { all = append(all, rt.s) })
	for _, s := range all {
		s.turns.betweenTurns(s.stream.flush)
	}
}
