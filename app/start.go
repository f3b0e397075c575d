package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/protocol/acpclient"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
)

// Start launches the runtime, performs the handshake and resolves the
// session: a fresh one with session/new, or, when Options.ResumeSessionID
// is set, a continuation through the route the runtime advertises, falling
// back to session/new when it is not confirmed. With
// Options.VerifyCredential, VerifyCredential runs first.
//
// A programmer's mistake in opts (a missing Launcher, settings naming SSH
// hosts with a local launcher, …) is an *OptionsError, before anything
// starts. Any other failure tears down whatever was started in the fixed
// order, emits a startup_failed event and returns a *domain.AgentError
// whose kind is that of docs/behaviour.md#start-up (settings refused by
// domain.SessionSettings.Validate: agent_not_found). A runtime whose host
// cannot be reached is started on the next host the launcher offers
// (docs/behaviour.md#ssh). Cancelling ctx cancels the start at once
// (turn_cancelled).
func Start(ctx context.Context, opts Options) (*Session, error) {
	opts, err := opts.resolved()
	if err != nil {
		return nil, refused(opts, err)
	}
	obs := observe(ctx, opts.Observers, opts.Clock.Now())
	if opts.VerifyCredential {
		if err := verifyObserved(ctx, opts, obs); err != nil {
			return nil, err
		}
	}
	return startOwn(ctx, opts, obs, func(c *connection) *Session { return newSession(c, opts, obs) })
}

// startOwn runs the starts of one session on a process of its own, each
// on a session made by mk (a new one, or the same one again for a start
// in place): the first, at most two restarts to settle the measurement
// source (docs/behaviour.md#token-accounting), and a start on another host
// for each host that could not be reached.
func startOwn(ctx context.Context, opts Options, obs *observation, mk func(*connection) *Session) (*Session, error) {
	plan := measurePlan{}
	var unreachable []string
	var lastErr error // the last unreachable host's own failure
	for start := 1; ; {
		c := newConnection(opts, false)
		c.meter.plan = plan
		s := mk(c)
		err := s.open(ctx, unreachable)
		if err == nil {
			st := c.meter.handshake(ctx, c.agent.Name, c.rt.target, start < maxStarts)
			if st.restart {
				s.log.Info(st.why, "name", c.agent.Name, "start", start)
				s.replace(ctx, ports.StepRestart)
				plan, start = st.next, start+1
				continue
			}
			if st.dropped {
				s.caps.lower(domain.CapTokenCounts)
			}
			if st.armed {
				s.caps.measuredInPlace(c.rt.target.Remote())
			}
			err = s.resolve(ctx)
		}
		if err == nil {
			err = s.confirmToolServers(ctx)
		}
		if host := c.rt.target.Host; err != nil && host != "" && ctx.Err() == nil && errors.Is(err, domain.ErrHostUnreachable) {
			s.log.Warn("host unreachable; trying the next host", "host", host, "error", err)
			s.replace(ctx, ports.StepFailover)
			unreachable, lastErr = append(unreachable, host), err
			continue
		}
		if err != nil && lastErr != nil && c.rt.proc == nil && errors.Is(err, domain.ErrHostUnreachable) {
			err = lastErr // no host left: the last host's own failure is the start's
		}
		if err != nil {
			s.fail(ctx, err)
			return nil, err
		}
		adv := c.agent.Advertised
		s.log.Info("agent implementation", "agent_name", c.agent.Name, "agent_version", c.agent.Version,
			"load_session", adv.LoadSession, "close", adv.Close, "resume", adv.Resume, "delete", adv.Delete)
		s.opened(obs)
		return s, nil
	}
}

// replace tears down a start that another start replaces; step names
// the reason in the observation.
func (s *Session) replace(ctx context.Context, step string) {
	began := s.clock.Now()
	s.life.replaced, s.life.within = true, step
	if err := s.stopWithin(ctx); err != nil {
		s.log.Warn("teardown of a replaced start reported", "step", step, "error", err)
	}
	s.obs.step(step, "", began, s.clock.Now(), nil)
}

// fail tears down a session that did not start, and reports it.
func (s *Session) fail(ctx context.Context, err error) {
	s.life.replaced = true
	if serr := s.stopWithin(ctx); serr != nil {
		s.log.Debug("teardown after a failed start reported", "error", serr)
	}
	if oe := (*OptionsError)(nil); !errors.As(err, &oe) { // a programmer's mistake is no event
		s.stream.emit(domain.Event{Type: domain.EventStartupFailed, Message: failureMessage(err), AgentPID: s.PID()})
	}
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
// Prepare, told which hosts could not be reached), then the MCP
// configuration is parsed, then the runtime is started and the handshake
// performed.
func (s *Session) open(ctx context.Context, unreachable []string) error {
	if err := s.conn.admit(ctx); err != nil {
		return err
	}
	began := s.clock.Now()
	err := s.launch(ctx, unreachable)
	s.obs.step(ports.StepLaunch, "", began, s.clock.Now(), err)
	if err != nil {
		return err
	}
	began = s.clock.Now()
	err = s.conn.handshake(ctx)
	s.obs.step(ports.StepInitialize, "", began, s.clock.Now(), err)
	if err == nil {
		s.speak()
	}
	return err
}

// launch runs start-up steps 1 to 4: the connection prepares the
// command, the session's tool servers are read and armed (kept until the
// handshake decides what is deliverable), the measurement source is armed
// and the process started with the session as the router's one route.
func (s *Session) launch(ctx context.Context, unreachable []string) error {
	c := s.conn
	plan, err := c.prepare(unreachable)
	if err != nil {
		return err
	}
	servers, err := s.prepareServers(ctx)
	var env []string
	if err == nil {
		env, err = c.meter.arm(ctx, s.opts.Settings.Command, c.rt.target)
	}
	if err != nil {
		discard(plan)
		return err
	}
	s.caps.reset(c.rt.target.Remote(), c.meter.armed())
	s.attach()
	if err := c.launch(ctx, plan, env); err != nil {
		return err
	}
	s.res.servers = servers
	return nil
}

// prepareServers reads the MCP configuration and arms the beacon. The
// result tool's server is armed after the handshake (armResult, from
// resolve): which transport it is served on depends on the runtime's
// mcpCapabilities.
func (s *Session) prepareServers(ctx context.Context) ([]domain.MCPServer, error) {
	servers, err := s.loadMCPServers(ctx)
	if err == nil {
		servers, err = s.armBeacon(ctx, servers)
	}
	return servers, err
}

// attach gives the session its place on its connection's router: every
// message on a connection of its own, the messages naming it on a shared
// one.
func (s *Session) attach() {
	h := &connHandler{
		log: s.log, rt: s.conn.rt, stream: s.stream, turns: s.turns,
		readTimeout: s.opts.Settings.EffectiveReadTimeout(), onIdle: s.opts.OnReadIdle, sessionID: s.ID,
		perm: newPermissionJudge(s.opts, s.conn.rt.target.Remote(), s.stream.announcedTitle),
	}
	s.conn.router.attach(s, h)
}

// opened tells the observers the session started.
func (s *Session) opened(obs *observation) {
	obs.start(ports.SessionInfo{
		At: s.clock.Now(), SessionID: s.ID(), Agent: s.res.agent, Route: s.res.route,
		Capabilities: s.Capabilities(), Remote: s.conn.rt.target.Remote(),
	})
}

// discard gives back what a prepared plan holds when it will not be
// started (a pool's reserved slot, docs/behaviour.md#ssh).
func discard(plan ports.Plan) {
	if d, ok := plan.(ports.Discarder); ok {
		d.Discard()
	}
}

// msgNoHostLeft is the message of a start whose every host was unreachable.
const msgNoHostLeft = "ssh connection failed: no host left to try"

// loadMCPServers parses the MCP configuration before anything is
// launched, once per start (docs/behaviour.md#mcp): a remote launch
// delivers none and reads nothing; a file that declares a reserved server
// name fails the start.
func (s *Session) loadMCPServers(ctx context.Context) ([]domain.MCPServer, error) {
	path := s.opts.Settings.MCPConfigPath
	if path == "" {
		return nil, nil
	}
	if s.conn.rt.target.Remote() {
		s.log.Info("a remote launch delivers no MCP servers; the configuration is not read", "host", s.conn.rt.target.Host)
		return nil, nil
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
// operator's file may use it: the caller's own tools (when the settings
// reserve a name), and the tool-server beacon when the confirmation is
// asked for.
func (s *Session) reservedFor(name string) string {
	set := s.opts.Settings
	switch {
	case set.ReservedMCPName != "" && name == set.ReservedMCPName:
		return "the caller's own tools"
	case name == domain.BeaconServerName && set.ConfirmToolServers:
		return "the tool-server beacon"
	case name == domain.ResultServerName && s.opts.output != nil && s.opts.ResultServer != nil:
		return "the result tool"
	}
	return ""
}

// handshakeInfo records what the handshake advertised, also for a session
// on a shared process (docs/behaviour.md#runtime-host).
func (s *Session) handshakeInfo(info domain.AgentInfo) {
	s.res.agent = info
	adv := info.Advertised
	if !info.Reported {
		s.caps.lower(domain.CapAgentVersion)
	}
	if !adv.LoadSession && !adv.Resume {
		s.caps.lower(domain.CapSessionContinuation)
	}
	if s.res.endWith == "" && adv.Close {
		s.res.endWith = acpwire.MethodSessionClose
	}
	s.deliverable()
}

// versionRefusedFor maps an initialize error that refuses the protocol
// version the request asked for (want) — code -32022, or data naming the
// supported versions — onto agent_not_found, not retryable: the
// operator's message names the versions the runtime supports
// (docs/behaviour.md#start-up-errors). Any other error is nil.
func versionRefusedFor(err error, want int) error {
	var callErr *acpclient.CallError
	if !errors.As(err, &callErr) {
		return nil
	}
	supported, named := acpwire.SupportedVersions(callErr.RPC.Data)
	if callErr.Code() != acpwire.CodeUnsupportedProtocolVersion && !named {
		return nil
	}
	return domain.WrapError(domain.KindAgentNotFound,
		domain.UnsupportedProtocolMessage(want, supported), callErr).WithReason(domain.ReasonProtocolUnsupported)
}

// deliverable decides, once, which servers the runtime can take: every
// stdio server, HTTP and SSE servers only when advertised. Withholding
// one lowers "tool servers".
func (s *Session) deliverable() {
	adv := s.res.agent.Advertised
	kept := make([]domain.MCPServer, 0, len(s.res.servers))
	for _, srv := range s.res.servers {
		if srv.Deliverable(adv.MCPHTTP, adv.MCPSSE) {
			kept = append(kept, srv)
			continue
		}
		s.log.Info("withheld an MCP server whose transport the agent did not advertise",
			"server", srv.Name, "transport", string(srv.Transport), "http", adv.MCPHTTP, "sse", adv.MCPSSE)
	}
	if len(kept) < len(s.res.servers) {
		s.caps.lower(domain.CapToolServers)
	}
	s.res.servers = kept
	operators := len(kept)
	if s.tools.beacon != nil {
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
			Fork:                  sc.CanFork(),
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
		info.Advertised.AuthMethodDetails = append(info.Advertised.AuthMethodDetails,
			domain.AuthMethod{ID: m.ID, Name: m.Name, Description: m.Description, Type: m.Type})
	}
	if d := sc.Details(); len(d) > 0 {
		info.Advertised.SessionDetails = d
	}
	info.Advertised.SystemPromptModes = sc.SystemPromptModes()
	info.Advertised.AuthCapabilities = acpwire.ObjectKeys(ac.Auth)
	info.Advertised.Providers = len(ac.Providers) > 0 && string(ac.Providers) != "null"
	info.Advertised.ProviderKeys = acpwire.ObjectKeys(ac.Providers)
	info.Advertised.MetaKeys = acpwire.MetaKeys(ac.Meta)
	info.Advertised.ResultMetaKeys = acpwire.MetaKeys(resp.Meta)
	info.Advertised.Steering = acpwire.SteeringAdvertised(resp.Meta, ac.Meta)
	if resp.AgentInfo != nil {
		info.Reported = true
		info.Name, info.Title, info.Version = resp.AgentInfo.Name, resp.AgentInfo.Title, resp.AgentInfo.Version
	}
	return info
}

// resolve creates or continues the session (step 6,
// docs/behaviour.md#continuation). No continuation outcome fails the start
// on its own account: any error, timeout or unconfirmed load lowers
// "session continuation" and falls back to session/new.
func (s *Session) resolve(ctx context.Context) error {
	if err := s.admitSessionConfig(); err != nil {
		return err
	}
	if err := s.armResult(ctx); err != nil {
		return err
	}
	if s.opts.ForkSessionID != "" {
		began := s.clock.Now()
		err := s.forkSession(ctx)
		s.obs.step(acpwire.MethodSessionFork, "", began, s.clock.Now(), err)
		return err
	}
	id := s.opts.ResumeSessionID
	route := ContinuationRoute(s.res.agent.Advertised)
	if id != "" {
		s.res.continuation = &Continuation{Requested: id, Route: route}
	}
	if id != "" && route == "" {
		s.res.continuation.Reason = msgNoContinuationRoute
		s.log.Info("the runtime advertises no continuation method; creating a new session", "session_id", id)
	}
	if id != "" && route != "" {
		c := &continuation{
			client: s.conn.rt.client, clock: s.clock, log: s.log, creations: s.opts.Creations,
			stream: s.stream, readTimeout: s.opts.Settings.EffectiveReadTimeout(), proto: s.protocol(),
		}
		began := s.clock.Now()
		err := c.continueSession(ctx, route, acpwire.LoadSessionRequest{SessionID: id, CWD: s.cwd(), MCPServers: s.encodeServers(),
			AdditionalDirectories: s.opts.Settings.Session.AdditionalDirectories, SystemPrompt: s.systemPrompt()})
		s.obs.step(route, "", began, s.clock.Now(), err)
		s.res.control = c.control
		if err == nil {
			s.res.route = route
			s.res.continuation.Continued = true
			s.adopt(id)
			s.conn.meter.opened(id, true)
			s.log.Info("agent session continued", "route", route, "session_id", id, "agent_pid", s.PID())
			s.protocol().continued(ctx, id)
			a := c.answer
			return s.configure(ctx, sessionOffer(a.Modes, a.ConfigOptions, a.Models))
		}
		if ctx.Err() != nil {
			return domain.WrapError(domain.KindTurnCancelled, msgStartCancelled, ctx.Err())
		}
		s.caps.lower(domain.CapSessionContinuation)
		s.res.continuation.Reason = err.Error()
		s.log.Warn("session continuation not confirmed; falling back to session/new",
			"route", route, "session_id", id, "reason", err.Error())
	}
	began := s.clock.Now()
	err := s.createSession(ctx)
	s.obs.step(ports.StepSessionNew, "", began, s.clock.Now(), err)
	return err
}

// createSession sends session/new and records the session it created.
func (s *Session) createSession(ctx context.Context) error {
	s.res.route = acpwire.MethodSessionNew
	callCtx, cancel := context.WithTimeout(ctx, s.opts.Settings.EffectiveReadTimeout())
	resp, err := s.conn.rt.client.NewSession(callCtx, acpwire.NewSessionRequest{CWD: s.cwd(), MCPServers: s.encodeServers(),
		AdditionalDirectories: s.opts.Settings.Session.AdditionalDirectories, SystemPrompt: s.systemPrompt()})
	cancel()
	if err != nil {
		return s.startupError(ctx, acpwire.MethodSessionNew, err)
	}
	if resp.SessionID == "" {
		return domain.NewError(domain.KindResponseError, "session/new answered no sessionId")
	}
	s.adopt(resp.SessionID)
	s.res.created = &resp
	s.conn.meter.opened(resp.SessionID, false)
	if s.res.agent.Advertised.LoadSession {
		// Only a runtime that advertises loadSession can be asked to load
		// it, the one route the hold is for (docs/behaviour.md#continuation).
		s.opts.Creations.Remember(resp.SessionID, s.clock.Now())
	}
	s.log.Info("agent session created", "session_id", resp.SessionID, "agent_pid", s.PID())
	return s.configure(ctx, sessionOffer(resp.Modes, resp.ConfigOptions, resp.Models))
}

// seat runs the start-up steps a session has of its own on a running
// connection: its tool servers, the handshake's record, the session itself
// (created or continued) and the confirmation of its tools.
func (s *Session) seat(ctx context.Context) error {
	c := s.conn
	s.caps.reset(c.rt.target.Remote(), false)
	servers, err := s.prepareServers(ctx)
	if err != nil {
		return err
	}
	s.res.servers = servers
	s.speak()
	c.router.begin()
	defer c.router.end()
	s.attach()
	err = s.resolve(ctx)
	if resumed := s.opts.ResumeSessionID; resumed != "" && s.ID() != "" && s.ID() != resumed {
		// The continuation fell back to a new session, whose route adopt
		// took: the old id routes nothing.
		c.router.remove(resumed)
	}
	if err == nil {
		err = s.confirmToolServers(ctx)
	}
	return err
}
