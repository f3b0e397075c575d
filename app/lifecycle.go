package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/protocol/acpclient"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

// Session is one running ACP session on one runtime. It is the lifecycle
// part of a session (docs/behaviour.md#start-up, #turn-disposition,
// #teardown): it owns the process, the connection, the capability record,
// the running turn and the ending held for the next one, and drives the
// other parts (stream, continuation, permission policy, measurement).
type Session struct {
	opts         Options
	log          *slog.Logger
	clock        ports.Clock
	verification bool // a credential-verification session

	// Set while the session starts; read-only afterwards.
	target      ports.Target
	proc        ports.Process
	conn        *jsonrpc.Conn
	client      *acpclient.Client
	stream      *eventStream
	meter       *meter
	agent       domain.AgentInfo
	closeMethod string
	route       string
	control     NegativeControl
	servers     []domain.MCPServer // delivered on session/new and continuation calls
	beacon      ports.ArmedBeacon  // the tool-server beacon, nil when not asked for

	// obs follows the session for Options.Observers
	// (docs/behaviour.md#observability); nil observes nothing. Set before
	// anything runs. quiet keeps a teardown from closing it (a restart, a
	// failed start), and teardownWithin names the step holding the
	// teardown ("" for the session).
	obs            *observation
	quiet          bool
	teardownWithin string

	turnGate sync.Mutex // held by a running turn, so a flush between turns cannot interleave with it

	// turn is the running turn. It is set and cleared under mu (with
	// held); the event stream's hot path reads it without the lock.
	turn atomic.Pointer[turnState]

	mu           sync.Mutex // guards the fields below
	sessionID    string
	caps         domain.Capabilities
	noticeSent   bool
	held         *ending
	turnsStarted int

	outputLost atomic.Bool // the drain bound elapsed after the reap

	stopping chan struct{} // closed when teardown begins
	stopOnce sync.Once
	stopDone chan struct{} // closed when teardown has finished
	stopErr  error
	wg       sync.WaitGroup
}

// Start launches the runtime, performs the handshake and resolves the
// session: a fresh one with session/new, or, when Options.ResumeSessionID
// is set, a continuation through the route the runtime advertises, falling
// back to session/new when it is not confirmed. With
// Options.VerifyCredential a short-lived verification session runs first.
//
// Before anything is launched, Options.Config goes through
// domain.Config.Validate exactly as `acpdrive validate` runs it. A failure
// tears down whatever was started in the fixed order, emits a
// startup_failed event and returns a *domain.AgentError whose kind is that
// of docs/behaviour.md#start-up (a refused configuration: agent_not_found). Cancelling ctx cancels the start at once
// (turn_cancelled).
func Start(ctx context.Context, opts Options) (*Session, error) {
	opts.withDefaults()
	if err := checkOptions(opts); err != nil {
		if opts.Clock != nil {
			opts.OnEvent(domain.Event{Type: domain.EventStartupFailed, Message: failureMessage(err), Time: opts.Clock.Now().UTC()})
		}
		return nil, err
	}
	obs := observe(ctx, opts.Observers, opts.Clock.Now())
	if opts.VerifyCredential {
		began := opts.Clock.Now()
		if err := verifyCredential(ctx, opts); err != nil {
			now := opts.Clock.Now()
			obs.step(ports.StepVerify, "", began, now, err)
			ev := domain.Event{Type: domain.EventStartupFailed, Message: failureMessage(err), Time: now.UTC()}
			opts.OnEvent(ev)
			obs.event(ev)
			obs.end(now, domain.NewCapabilities(false, false), err)
			return nil, err
		}
		obs.step(ports.StepVerify, "", began, opts.Clock.Now(), nil)
	}
	plan := measurePlan{}
	for start := 1; ; start++ {
		s := newSession(opts, false)
		s.obs = obs
		s.meter.plan = plan
		err := s.open(ctx)
		if err == nil {
			// Restart to settle the measurement source
			// (docs/behaviour.md#token-accounting): the handshake named
			// another runtime than the one the settings were meant for.
			if next, why, again := s.meter.settle(s.agent.Name, s.target); again && start < maxStarts {
				s.log.Info(why, "name", s.agent.Name, "start", start)
				began := s.clock.Now()
				s.quiet, s.teardownWithin = true, ports.StepRestart
				s.stopQuietly(ctx)
				obs.step(ports.StepRestart, "", began, s.clock.Now(), nil)
				plan = next
				continue
			}
			if s.meter.armed() && !s.meter.check(s.agent.Name) {
				s.lower(domain.CapTokenCounts)
			}
			err = s.resolve(ctx)
		}
		if err == nil {
			err = s.confirmToolServers(ctx)
		}
		if err != nil {
			s.fail(ctx, err)
			return nil, err
		}
		s.logImplementation()
		obs.start(ports.SessionInfo{
			At: s.clock.Now(), SessionID: s.ID(), Agent: s.agent, Route: s.route,
			Capabilities: s.Capabilities(), Remote: s.target.Remote(),
		})
		return s, nil
	}
}

// stopQuietly tears down a start that is replaced by another one.
func (s *Session) stopQuietly(ctx context.Context) {
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.Config.StopGrace+10*time.Second)
	defer cancel()
	if err := s.Stop(stopCtx); err != nil {
		s.log.Warn("teardown before a restart reported", "error", err)
	}
}

// logImplementation logs the agent implementation record, once per
// session start, for the start that is kept.
func (s *Session) logImplementation() {
	adv := s.agent.Advertised
	s.log.Info("agent implementation", "agent_name", s.agent.Name, "agent_version", s.agent.Version,
		"load_session", adv.LoadSession, "close", adv.Close, "resume", adv.Resume, "delete", adv.Delete)
}

// checkOptions refuses what cannot start at all (docs/behaviour.md#validation):
// no launcher or clock, and a configuration with an error finding of
// domain.Config.Validate — the function `acpdrive validate` runs — as
// agent_not_found with the findings' text. An empty command is left to
// start-up step 2, which reports it with its own message. Warnings are
// logged.
func checkOptions(opts Options) error {
	if opts.Launcher == nil {
		return domain.NewError(domain.KindAgentNotFound, "app.Options.Launcher is required")
	}
	if opts.Clock == nil {
		return domain.NewError(domain.KindAgentNotFound, "app.Options.Clock is required")
	}
	if opts.Config.ConfirmToolServers && opts.ToolServerBeacon == nil {
		return domain.NewError(domain.KindAgentNotFound, "app.Options.ToolServerBeacon is required when Config.ConfirmToolServers is set")
	}
	var errs []domain.Finding
	for _, f := range opts.Config.Validate() {
		switch {
		case f.Severity != domain.SeverityError:
			opts.Logger.Warn("configuration warning", "check", f.Check, "message", f.Message)
		case f.Check != domain.CheckCommandRequired:
			errs = append(errs, f)
		}
	}
	if err := domain.FindingsError(errs); err != nil {
		return domain.WrapError(domain.KindAgentNotFound, err.Error(), err)
	}
	return nil
}

func newSession(opts Options, verification bool) *Session {
	s := &Session{
		opts:         opts,
		log:          opts.Logger.With("component", "acp_session"),
		clock:        opts.Clock,
		verification: verification,
		caps:         domain.NewCapabilities(false, false),
		stopping:     make(chan struct{}),
		stopDone:     make(chan struct{}),
	}
	sink := opts.OnEvent
	if len(opts.Observers) > 0 && !verification {
		sink = func(ev domain.Event) {
			opts.OnEvent(ev)
			s.obs.event(ev)
		}
	}
	s.stream = newEventStream(opts.Clock, s.log, sink, opts.OnAgentText, s.PID)
	s.stream.activity = s.touch
	s.stream.noticed = func(at time.Time, msg string) { s.obs.notice(at, msg) }
	s.meter = newMeter(opts.MeasurementSources, s.log)
	return s
}

// fail tears down a session that did not start, and reports it.
func (s *Session) fail(ctx context.Context, err error) {
	s.quiet = true
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.Config.StopGrace+10*time.Second)
	defer cancel()
	if serr := s.Stop(stopCtx); serr != nil {
		s.log.Debug("teardown after a failed start reported", "error", serr)
	}
	s.stream.emit(domain.Event{Type: domain.EventStartupFailed, Message: failureMessage(err), AgentPID: s.PID()})
	s.obs.end(s.clock.Now(), s.Capabilities(), err)
}

// failureMessage is the message a startup_failed event carries: the
// AgentError's own message (its kind travels separately).
func failureMessage(err error) string {
	var ae *domain.AgentError
	if errors.As(err, &ae) {
		return ae.Message
	}
	return err.Error()
}

// open runs start-up steps 1 to 5 (docs/behaviour.md#start-up): the
// workspace is validated and the command resolved (the launcher's
// Prepare), then the MCP configuration is parsed, then the runtime is
// started and the handshake performed.
func (s *Session) open(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return domain.WrapError(domain.KindTurnCancelled, msgStartCancelled, err)
	}
	if !utf8.ValidString(s.opts.Workspace) {
		return domain.NewError(domain.KindInvalidWorkspaceCWD, domain.MsgWorkspaceNotUTF8)
	}
	began := s.clock.Now()
	if err := s.launch(ctx); err != nil {
		s.obs.step(ports.StepLaunch, "", began, s.clock.Now(), err)
		return err
	}
	s.obs.step(ports.StepLaunch, "", began, s.clock.Now(), nil)
	began = s.clock.Now()
	err := s.initialize(ctx, s.servers)
	s.obs.step(ports.StepInitialize, "", began, s.clock.Now(), err)
	return err
}

// launch runs start-up steps 1 to 4: the launcher prepares the command,
// the MCP configuration is read (kept in s.servers until the handshake
// decides what is deliverable), the measurement source is armed and the
// process started.
func (s *Session) launch(ctx context.Context) error {
	cfg := s.opts.Config
	if len(cfg.Command) == 0 || strings.TrimSpace(cfg.Command[0]) == "" {
		return domain.NewError(domain.KindAgentNotFound, domain.MsgEmptyCommand)
	}
	plan, err := s.opts.Launcher.Prepare(ports.LaunchRequest{Command: cfg.Command, Workspace: s.opts.Workspace})
	if err != nil {
		return keepKind(err, msgStartFailed)
	}
	s.target = plan.Target()
	servers, err := s.loadMCPServers(ctx)
	if err != nil {
		return err
	}
	if servers, err = s.armBeacon(ctx, servers); err != nil {
		return err
	}
	env, err := s.meter.arm(ctx, cfg.Command, s.target, s.verification)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.caps = domain.NewCapabilities(s.target.Remote(), s.meter.armed())
	s.mu.Unlock()
	proc, err := plan.Start(ctx, env)
	if err != nil {
		if ctx.Err() != nil {
			return domain.WrapError(domain.KindTurnCancelled, msgStartCancelled, err)
		}
		return keepKind(err, msgStartFailed)
	}
	s.proc = proc
	s.conn = jsonrpc.NewConn(proc.Stdout(), proc.Stdin(), (*handler)(s), jsonrpc.Options{Logger: s.log})
	s.client = acpclient.New(s.conn)
	s.wg.Add(1)
	go s.watchExit()
	id := proc.Identity()
	s.log.Info("agent process started", "agent_pid", id.PID, "host", id.Host, "command", cfg.Command[0])
	s.servers = servers
	return nil
}

// keepKind keeps an AgentError's kind and makes anything else port_exit.
func keepKind(err error, msg string) error {
	if _, ok := domain.KindOf(err); ok {
		return err
	}
	return domain.WrapError(domain.KindPortExit, msg, err)
}

// loadMCPServers parses the MCP configuration before anything is
// launched, once per start (docs/behaviour.md#mcp): a remote launch and a
// verification session deliver none and read nothing; a file that
// declares the reserved server name fails the start.
func (s *Session) loadMCPServers(ctx context.Context) ([]domain.MCPServer, error) {
	path := s.opts.MCPConfigPath
	if path == "" || s.verification {
		return nil, nil
	}
	if s.target.Remote() {
		s.log.Info("a remote launch delivers no MCP servers; the configuration is not read", "host", s.target.Host)
		return nil, nil
	}
	if s.opts.MCPSource == nil {
		return nil, domain.NewError(domain.KindResponseError, domain.MsgMCPParsePrefix+"no MCP source configured")
	}
	servers, err := s.opts.MCPSource.Load(ctx, path)
	if err != nil {
		return nil, keepKind(err, domain.MsgMCPParsePrefix+path)
	}
	for _, srv := range servers {
		if use := s.reservedFor(srv.Name); use != "" {
			return nil, domain.NewError(domain.KindResponseError,
				fmt.Sprintf("%s%s: declares a server named %q, a name reserved for %s", domain.MsgMCPParsePrefix, path, srv.Name, use))
		}
	}
	return servers, nil
}

// reservedFor says what an MCP server name is reserved for, "" when an
// operator's file may use it: the caller's own tools, and the tool-server
// beacon when the confirmation is asked for.
func (s *Session) reservedFor(name string) string {
	switch {
	case name == s.opts.ReservedMCPName:
		return "the caller's own tools"
	case name == domain.BeaconServerName && s.opts.Config.ConfirmToolServers:
		return "the tool-server beacon"
	}
	return ""
}

// initialize performs the handshake (step 5) and records what the
// runtime advertised.
func (s *Session) initialize(ctx context.Context, servers []domain.MCPServer) error {
	req := acpwire.InitializeRequest{
		ProtocolVersion: acpwire.ProtocolVersion,
		ClientInfo:      &acpwire.Implementation{Name: s.opts.ClientName, Version: s.opts.ClientVersion},
	}
	callCtx, cancel := context.WithTimeout(ctx, s.opts.Config.InitializeTimeout())
	resp, err := s.client.Initialize(callCtx, req)
	cancel()
	if err != nil {
		return s.startupError(ctx, acpwire.MethodInitialize, err)
	}
	if resp.ProtocolVersion != acpwire.ProtocolVersion {
		return domain.NewError(domain.KindResponseError,
			fmt.Sprintf("agent reported protocol version %d, want %d", resp.ProtocolVersion, acpwire.ProtocolVersion))
	}
	s.agent = agentInfo(resp)
	adv := s.agent.Advertised
	if !s.agent.Reported {
		s.lower(domain.CapAgentVersion)
	}
	if !adv.LoadSession && !adv.Resume {
		s.lower(domain.CapSessionContinuation)
	}
	s.closeMethod = teardownMethod(adv, s.verification)
	s.deliverable(servers)
	return nil
}

// deliverable decides, once, which servers the runtime can take: every
// stdio server, HTTP and SSE servers only when advertised. Withholding
// one lowers "tool servers".
func (s *Session) deliverable(servers []domain.MCPServer) {
	adv := s.agent.Advertised
	kept := make([]domain.MCPServer, 0, len(servers))
	for _, srv := range servers {
		if srv.Deliverable(adv.MCPHTTP, adv.MCPSSE) {
			kept = append(kept, srv)
			continue
		}
		s.log.Info("withheld an MCP server whose transport the agent did not advertise",
			"server", srv.Name, "transport", string(srv.Transport), "http", adv.MCPHTTP, "sse", adv.MCPSSE)
	}
	if len(kept) < len(servers) {
		s.lower(domain.CapToolServers)
	}
	s.servers = kept
	operators := len(kept)
	if s.beacon != nil {
		operators-- // the beacon serves no tool
	}
	s.stream.serveTools(operators > 0)
}

// agentInfo turns the handshake into the domain's record.
func agentInfo(resp acpwire.InitializeResponse) domain.AgentInfo {
	ac := resp.AgentCapabilities
	sc := ac.SessionCapabilities
	info := domain.AgentInfo{
		ProtocolVersion: resp.ProtocolVersion,
		Advertised: domain.Advertised{
			LoadSession:           ac.LoadSession,
			Resume:                sc.CanResume(),
			Close:                 sc.CanClose(),
			Delete:                sc.CanDelete(),
			List:                  sc.CanList(),
			SessionMarkers:        sc.Advertised(),
			MCPHTTP:               ac.MCPCapabilities.HTTP,
			MCPSSE:                ac.MCPCapabilities.SSE,
			PromptImage:           ac.PromptCapabilities.Image,
			PromptAudio:           ac.PromptCapabilities.Audio,
			PromptEmbeddedContext: ac.PromptCapabilities.EmbeddedContext,
			AuthMethods:           []string{},
		},
	}
	for _, m := range resp.AuthMethods {
		info.Advertised.AuthMethods = append(info.Advertised.AuthMethods, m.ID)
	}
	if resp.AgentInfo != nil {
		info.Reported = true
		info.Name, info.Title, info.Version = resp.AgentInfo.Name, resp.AgentInfo.Title, resp.AgentInfo.Version
	}
	return info
}

// teardownMethod selects how a session ends through the protocol
// (docs/behaviour.md#teardown): a verification session prefers
// session/delete and falls back to session/close; any other session uses
// session/close when advertised. "" means process termination only.
func teardownMethod(adv domain.Advertised, verification bool) string {
	switch {
	case verification && adv.Delete:
		return acpwire.MethodSessionDelete
	case adv.Close:
		return acpwire.MethodSessionClose
	}
	return ""
}

// mcpServers is the mcpServers list of session/new and the continuation
// calls; never null on the wire. A verification session declares none.
func (s *Session) mcpServers() []json.RawMessage {
	if s.verification {
		return []json.RawMessage{}
	}
	return acpwire.EncodeMCPServers(s.servers)
}

// resolve creates or continues the session (step 6,
// docs/behaviour.md#continuation). No continuation outcome fails the start
// on its own account: any error, timeout or unconfirmed load lowers
// "session continuation" and falls back to session/new.
func (s *Session) resolve(ctx context.Context) error {
	id := s.opts.ResumeSessionID
	route := ContinuationRoute(s.agent.Advertised)
	if id != "" && route == "" {
		s.log.Info("the runtime advertises no continuation method; creating a new session", "session_id", id)
	}
	if id != "" && route != "" {
		c := &continuation{
			client: s.client, clock: s.clock, log: s.log, creations: s.opts.Creations,
			stream: s.stream, readTimeout: s.opts.Config.EffectiveReadTimeout(),
		}
		began := s.clock.Now()
		err := c.continueSession(ctx, route, acpwire.LoadSessionRequest{SessionID: id, CWD: s.opts.Workspace, MCPServers: s.mcpServers()})
		s.obs.step(route, "", began, s.clock.Now(), err)
		s.control = c.control
		if err == nil {
			s.route = route
			s.adopt(id)
			s.meter.opened(id, true)
			s.log.Info("agent session continued", "route", route, "session_id", id, "agent_pid", s.PID())
			return nil
		}
		if ctx.Err() != nil {
			return domain.WrapError(domain.KindTurnCancelled, msgStartCancelled, ctx.Err())
		}
		s.lower(domain.CapSessionContinuation)
		s.log.Warn("session continuation not confirmed; falling back to session/new",
			"route", route, "session_id", id, "reason", err.Error())
	}
	s.route = acpwire.MethodSessionNew
	began := s.clock.Now()
	err := s.createSession(ctx)
	s.obs.step(ports.StepSessionNew, "", began, s.clock.Now(), err)
	return err
}

// createSession sends session/new and records the session it created.
func (s *Session) createSession(ctx context.Context) error {
	callCtx, cancel := context.WithTimeout(ctx, s.opts.Config.EffectiveReadTimeout())
	resp, err := s.client.NewSession(callCtx, acpwire.NewSessionRequest{CWD: s.opts.Workspace, MCPServers: s.mcpServers()})
	cancel()
	if err != nil {
		return s.startupError(ctx, acpwire.MethodSessionNew, err)
	}
	if resp.SessionID == "" {
		return domain.NewError(domain.KindResponseError, "session/new answered no sessionId")
	}
	s.adopt(resp.SessionID)
	s.meter.opened(resp.SessionID, false)
	if s.opts.Creations != nil && s.agent.Advertised.LoadSession {
		// Only a runtime that advertises loadSession can be asked to load
		// it, the one route the hold is for (docs/behaviour.md#continuation).
		s.opts.Creations.Remember(resp.SessionID, s.clock.Now())
	}
	s.log.Info("agent session created", "session_id", resp.SessionID, "agent_pid", s.PID())
	return nil
}

// adopt makes id the session's identifier.
func (s *Session) adopt(id string) {
	s.mu.Lock()
	s.sessionID = id
	s.mu.Unlock()
	s.stream.adopt(id)
}

// lower lowers a capability entry. Once the once-per-session notice went
// out, a lowering is logged at Warn instead of producing a second notice.
func (s *Session) lower(label domain.CapabilityLabel) {
	s.mu.Lock()
	changed := s.caps.Lower(label)
	late := changed && s.noticeSent
	s.mu.Unlock()
	if late {
		s.log.Warn(domain.MsgCapabilityLoweredLate, "capability", string(label))
	}
}

// Turn sends one session/prompt and relays the runtime's updates as
// events until the turn ends (docs/behaviour.md#turn-disposition).
// Cancelling ctx cancels the turn (session/cancel is sent once); a ctx
// deadline ends it as turn_timeout. Only one turn may run at a time: a
// second concurrent call is refused with response_error before anything
// reaches the runtime. An ending held from between turns (a request only a
// person could answer) ends this turn without sending the prompt.
func (s *Session) Turn(ctx context.Context, prompt string) domain.TurnResult {
	s.mu.Lock()
	if s.turn.Load() != nil {
		s.mu.Unlock()
		return domain.FailedResult(domain.NewError(domain.KindResponseError, domain.MsgTurnInFlight))
	}
	t := newTurn(s.clock.Now())
	s.turn.Store(t)
	s.mu.Unlock()
	t.meta = s.obs.turnStarted(s.clock.Now())
	s.turnGate.Lock()
	defer s.turnGate.Unlock()

	s.mu.Lock()
	held := s.held
	s.held = nil
	first := s.turnsStarted == 0
	s.turnsStarted++
	caps := s.caps
	if first {
		s.noticeSent = true
	}
	s.mu.Unlock()

	s.stream.flush()
	s.stream.emit(domain.Event{Type: domain.EventSessionStarted, SessionID: s.ID(), Message: domain.MsgSessionStarted})
	if notice, ok := caps.Notice(); first && ok {
		s.stream.emit(domain.Event{Type: domain.EventNotification, Message: notice})
		s.stream.noticed(s.clock.Now(), notice)
	}
	if notice := s.toolServerNotice(); first && notice != "" {
		s.stream.emit(domain.Event{Type: domain.EventNotification, Message: notice})
	}

	var res domain.TurnResult
	switch {
	case s.outputLost.Load():
		res = domain.FailedResult(domain.NewError(domain.KindPortExit, domain.MsgOutputNotCollected))
	case held != nil:
		s.stream.notice(held.notice)
		res = held.result()
	case isDone(s.conn.Done()):
		res = domain.FailedResult(domain.NewError(domain.KindPortExit, domain.MsgConnEndedBeforeResult))
	default:
		res = s.runPrompt(ctx, t, prompt)
	}

	t.handedOver() // no prompt goes out after this point
	s.stream.flush()
	s.stream.endTurn()
	s.meter.turnEnded(ctx, s, &res)
	s.mu.Lock()
	s.turn.Store(nil)
	s.mu.Unlock()
	s.stream.emit(outcomeEvent(res))
	s.obs.turnEnded(s.clock.Now(), res)
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

// endForPerson ends the running turn as turn_input_required. A request
// that arrives when no turn runs, or after the running turn's prompt was
// answered, belongs to no turn: its ending is held for the next turn.
// It runs on the reader goroutine, so "answered" is exact: the answer is
// recorded before any later line is handled.
func (s *Session) endForPerson(notice string) {
	e := ending{
		override: domain.OverrideInputRequired,
		notice:   notice,
		err:      domain.Disposition("", domain.OverrideInputRequired, "").Err,
	}
	t := s.turn.Load()
	answered := t != nil && t.answeredOnReader()
	s.mu.Lock()
	if t == nil || answered || s.turn.Load() != t {
		if s.held == nil {
			s.held = &e
		}
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	// The notice goes out before the turn wakes, so it always precedes the
	// turn's outcome event.
	if t.claim(e) {
		s.stream.notice(notice)
		t.signal()
	}
}

// endingPending reports whether an ending is already decided, for the
// running turn or held for the next one.
func (s *Session) endingPending() bool {
	s.mu.Lock()
	held, t := s.held != nil, s.turn.Load()
	s.mu.Unlock()
	return held || t != nil && t.ended() && !t.answeredOnReader()
}

// endTurn ends the running turn, if any, with e.
func (s *Session) endTurn(e ending) {
	if t := s.turn.Load(); t != nil && !t.answeredOnReader() {
		t.end(e)
	}
}

// touch tells a running turn that the runtime is alive (stall timer).
func (s *Session) touch(at time.Time) {
	if t := s.turn.Load(); t != nil {
		t.touch(at)
	}
}

// ID is the identifier of the session the runtime runs: the continued one,
// or the one session/new created (also after a continuation fell back).
func (s *Session) ID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessionID
}

// PID is the local process acpdrive watches (the runtime, or on SSH the
// local ssh relay), or 0 before one was started or when none exists.
func (s *Session) PID() int {
	if s.proc == nil {
		return 0
	}
	return s.proc.Identity().PID
}

// Identity names the runtime as the transport started it; the zero value
// before a start.
func (s *Session) Identity() ports.Identity {
	if s.proc == nil {
		return ports.Identity{}
	}
	return s.proc.Identity()
}

// Remote reports whether the runtime runs on another host.
func (s *Session) Remote() bool { return s.target.Remote() }

// Capabilities returns a copy of the session's capability record.
func (s *Session) Capabilities() domain.Capabilities {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps
}

// AgentInfo returns what the handshake reported about the runtime.
func (s *Session) AgentInfo() domain.AgentInfo { return s.agent }

// Route reports how the session was resolved: "session/new",
// "session/load" or "session/resume".
func (s *Session) Route() string { return s.route }

// LastMessage returns the latest completed agent message.
func (s *Session) LastMessage() domain.Message { return s.stream.last() }

// watchExit enforces the drain bound: once the runtime process is reaped,
// its standard output gets DrainBound to reach end of stream before the
// session closes it itself. When the stream ends between turns, the
// message accumulated so far is reported (docs/behaviour.md#events).
func (s *Session) watchExit() {
	defer s.wg.Done()
	select {
	case <-s.proc.Exited():
	case <-s.conn.Done():
		s.flushBetweenTurns()
		return
	case <-s.stopping:
		return
	}
	select {
	case <-s.conn.Done():
		s.flushBetweenTurns()
		return
	case <-s.stopping:
		return
	case <-s.clock.After(s.opts.DrainBound):
	}
	s.outputLost.Store(true)
	s.log.Warn("agent stdout was not fully collected before the session ended", "drain_bound", s.opts.DrainBound)
	_ = s.proc.CloseStdout()
}

// flushBetweenTurns reports the accumulated message once no turn runs (a
// running turn reports it itself, before its outcome).
func (s *Session) flushBetweenTurns() {
	s.turnGate.Lock()
	defer s.turnGate.Unlock()
	s.stream.flush()
}

func isDone(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
