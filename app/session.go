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

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

// Session is one running ACP session on one runtime process.
type Session struct {
	opts Options
	log  *slog.Logger

	proc ports.Process
	conn *jsonrpc.Conn

	// Set while the session starts; read-only afterwards.
	init         acpwire.InitializeResponse
	closeMethod  string
	verification bool // a credential-verification session
	route        string
	control      NegativeControl
	servers      []json.RawMessage // MCP servers delivered on session/new and continuation calls

	emitMu sync.Mutex // serializes OnEvent calls

	mu           sync.Mutex // guards the fields below
	sessionID    string
	idKnown      bool
	caps         domain.Capabilities
	noticeSent   bool
	toolsServed  bool
	gatedNotice  bool
	acc          domain.Accumulator
	lastMessage  domain.Message
	tools        map[string]*toolRecord
	turn         *turnState
	held         *ending
	turnsStarted int
	replay       *replayWatch // set while a session/load waits for replay

	outputLost atomic.Bool // the drain bound elapsed after the reap

	stopping chan struct{}
	stopOnce sync.Once
	stopErr  error
	wg       sync.WaitGroup
}

// Start launches the runtime, performs the handshake and resolves the
// session: a fresh one with session/new, or, when Options.ResumeSessionID
// is set, a continuation through the route the runtime advertises, falling
// back to session/new when it is not confirmed. With
// Options.VerifyCredential a short-lived verification session runs first.
//
// On failure the process is torn down in the fixed order, a startup_failed
// event is emitted, and the returned error is a *domain.AgentError.
func Start(ctx context.Context, opts Options) (*Session, error) {
	opts.withDefaults()
	if opts.VerifyCredential {
		if err := verifyCredential(ctx, opts); err != nil {
			opts.OnEvent(domain.Event{Type: domain.EventStartupFailed, Message: failureMessage(err), Time: opts.Clock.Now().UTC()})
			return nil, err
		}
	}
	s := newSession(opts, false)
	err := s.open(ctx)
	if err == nil {
		err = s.resolve(ctx)
	}
	if err != nil {
		s.fail(ctx, err)
		return nil, err
	}
	return s, nil
}

func newSession(opts Options, verification bool) *Session {
	return &Session{
		opts:         opts,
		log:          opts.Logger.With("component", "acp_session"),
		tools:        make(map[string]*toolRecord),
		stopping:     make(chan struct{}),
		caps:         domain.NewCapabilities(false, false),
		verification: verification,
	}
}

// fail tears down a session that did not start, and reports it.
func (s *Session) fail(ctx context.Context, err error) {
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.Config.StopGrace+5*time.Second)
	defer cancel()
	_ = s.Stop(stopCtx)
	s.emit(domain.Event{Type: domain.EventStartupFailed, Message: failureMessage(err), AgentPID: s.PID()})
}

// failureMessage is the message a startup_failed event carries: the
// AgentError's own message (its kind travels separately), as the CLI's
// startup_failed line has it.
func failureMessage(err error) string {
	var ae *domain.AgentError
	if errors.As(err, &ae) {
		return ae.Message
	}
	return err.Error()
}

// open launches the runtime and performs the initialize handshake.
func (s *Session) open(ctx context.Context) error {
	cfg := s.opts.Config
	if len(cfg.Command) == 0 || isBlank(cfg.Command[0]) {
		return domain.NewError(domain.KindAgentNotFound, domain.MsgEmptyCommand)
	}
	if s.opts.Launcher == nil {
		return domain.NewError(domain.KindAgentNotFound, "no launcher configured")
	}
	if err := ctx.Err(); err != nil {
		return domain.WrapError(domain.KindTurnCancelled, "session start cancelled", err)
	}
	if err := s.checkMCPConfig(ctx); err != nil {
		return err
	}
	proc, err := s.opts.Launcher.Launch(ctx, ports.LaunchRequest{Command: cfg.Command, Workspace: s.opts.Workspace})
	if err != nil {
		if _, ok := domain.KindOf(err); ok {
			return err
		}
		return domain.WrapError(domain.KindPortExit, "failed to start subprocess", err)
	}
	s.proc = proc
	s.conn = jsonrpc.NewConn(proc.Stdout(), proc.Stdin(), (*handler)(s), jsonrpc.Options{Logger: s.log})
	s.wg.Add(1)
	go s.watchExit()
	s.log.Info("agent process started", "agent_pid", proc.PID(), "command", cfg.Command[0])
	return s.initialize(ctx)
}

func (s *Session) initialize(ctx context.Context) error {
	req := acpwire.InitializeRequest{
		ProtocolVersion: acpwire.ProtocolVersion,
		ClientInfo:      &acpwire.Implementation{Name: s.opts.ClientName, Version: s.opts.ClientVersion},
	}
	var resp acpwire.InitializeResponse
	if err := s.startupCall(ctx, acpwire.MethodInitialize, req, &resp, s.opts.Config.InitializeTimeout()); err != nil {
		return err
	}
	if resp.ProtocolVersion != acpwire.ProtocolVersion {
		return domain.NewError(domain.KindResponseError,
			fmt.Sprintf("agent reported protocol version %d, want %d", resp.ProtocolVersion, acpwire.ProtocolVersion))
	}
	s.init = resp
	sc := resp.AgentCapabilities.SessionCapabilities
	if resp.AgentInfo == nil {
		s.lower(domain.CapAgentVersion)
	}
	if !resp.AgentCapabilities.LoadSession && !sc.CanResume() {
		s.lower(domain.CapSessionContinuation)
	}
	s.closeMethod = teardownMethod(sc, s.verification)
	if err := s.renderMCPServers(ctx); err != nil {
		return err
	}
	info := resp.AgentInfo
	if info == nil {
		info = &acpwire.Implementation{}
	}
	s.log.Info("agent implementation", "agent_name", info.Name, "agent_version", info.Version,
		"load_session", resp.AgentCapabilities.LoadSession, "close", sc.CanClose(), "resume", sc.CanResume(),
		"delete", sc.CanDelete())
	return nil
}

// createSession sends session/new and records the session it created.
func (s *Session) createSession(ctx context.Context) error {
	req := acpwire.NewSessionRequest{CWD: s.opts.Workspace, MCPServers: s.mcpServers()}
	var resp acpwire.NewSessionResponse
	if err := s.startupCall(ctx, acpwire.MethodSessionNew, req, &resp, s.opts.Config.EffectiveReadTimeout()); err != nil {
		return err
	}
	if resp.SessionID == "" {
		return domain.NewError(domain.KindResponseError, "session/new answered no sessionId")
	}
	s.adopt(resp.SessionID)
	rememberCreated(resp.SessionID, s.opts.Clock.Now())
	s.log.Info("agent session created", "session_id", resp.SessionID, "agent_pid", s.proc.PID())
	return nil
}

// adopt makes id the session's identifier: from now on, updates naming
// another session are dropped.
func (s *Session) adopt(id string) {
	s.mu.Lock()
	s.sessionID = id
	s.idKnown = true
	s.mu.Unlock()
}

// mcpServers is the mcpServers list of session/new and the continuation
// calls; never null on the wire. A verification session declares none.
func (s *Session) mcpServers() []json.RawMessage {
	if s.servers == nil || s.verification {
		return []json.RawMessage{}
	}
	return s.servers
}

// checkMCPConfig parses the MCP configuration before anything is launched
// (seed "Session start" step 2), so a broken file fails the attempt before
// a process starts.
func (s *Session) checkMCPConfig(ctx context.Context) error {
	if s.opts.MCPConfigPath == "" || s.verification {
		return nil
	}
	if s.opts.MCPRenderer == nil {
		return domain.NewError(domain.KindResponseError, "parse MCP config: no MCP renderer configured")
	}
	_, _, err := s.opts.MCPRenderer.Render(ctx, s.opts.MCPConfigPath, ports.MCPCapabilities{HTTP: true, SSE: true})
	return err
}

// renderMCPServers renders the servers for what the handshake advertised
// (step 5): an HTTP (SSE) server is withheld unless mcpCapabilities.http
// (.sse) is true, which lowers "tool servers"; stdio servers always go.
func (s *Session) renderMCPServers(ctx context.Context) error {
	if s.opts.MCPConfigPath == "" || s.verification {
		return nil
	}
	mc := s.init.AgentCapabilities.MCPCapabilities
	servers, withheld, err := s.opts.MCPRenderer.Render(ctx, s.opts.MCPConfigPath, ports.MCPCapabilities{HTTP: mc.HTTP, SSE: mc.SSE})
	if err != nil {
		return err
	}
	if withheld {
		s.lower(domain.CapToolServers)
		s.log.Info("withheld an MCP server whose transport the agent did not advertise",
			"http", mc.HTTP, "sse", mc.SSE)
	}
	s.servers = servers
	s.mu.Lock()
	s.toolsServed = len(servers) > 0
	s.mu.Unlock()
	return nil
}

// teardownMethod selects how a session ends through the protocol (seed
// "Session close"): a verification session prefers session/delete and falls
// back to session/close; any other session uses session/close when
// advertised. "" means the session ends through process termination only.
func teardownMethod(sc *acpwire.SessionCapabilities, verification bool) string {
	switch {
	case verification && sc.CanDelete():
		return acpwire.MethodSessionDelete
	case sc.CanClose():
		return acpwire.MethodSessionClose
	}
	return ""
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

// ID is the identifier of the session the runtime runs: the continued one,
// or the one session/new created (also after a continuation fell back).
func (s *Session) ID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sessionID
}

// PID is the runtime's process ID (on SSH, the local ssh relay's), or 0
// before a process was started.
func (s *Session) PID() int {
	if s.proc == nil {
		return 0
	}
	return s.proc.PID()
}

// Capabilities returns a copy of the session's capability record.
func (s *Session) Capabilities() domain.Capabilities {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps
}

// AgentInfo returns what initialize reported about the runtime.
func (s *Session) AgentInfo() acpwire.InitializeResponse { return s.init }

// Route reports how the session was resolved: "session/new",
// "session/load" or "session/resume".
func (s *Session) Route() string { return s.route }

// LastMessage returns the latest completed agent message.
func (s *Session) LastMessage() domain.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastMessage
}

// watchExit enforces the drain bound: once the runtime process is reaped,
// its standard output gets DrainBound to reach end of stream before the
// session closes it itself.
func (s *Session) watchExit() {
	defer s.wg.Done()
	select {
	case <-s.proc.Exited():
	case <-s.conn.Done():
		return
	case <-s.stopping:
		return
	}
	select {
	case <-s.conn.Done():
		return
	case <-s.stopping:
		return
	case <-s.opts.Clock.After(s.opts.DrainBound):
	}
	s.outputLost.Store(true)
	s.log.Warn("agent stdout was not fully collected before the session ended", "drain_bound", s.opts.DrainBound)
	_ = s.proc.CloseStdout()
}

// emit hands one event to the sink.
func (s *Session) emit(ev domain.Event) {
	ev = s.stamp(ev)
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	s.opts.OnEvent(ev)
}

// stamp fills an event's time (UTC) and the agent's PID.
func (s *Session) stamp(ev domain.Event) domain.Event {
	if ev.Time.IsZero() {
		ev.Time = s.opts.Clock.Now()
	}
	ev.Time = ev.Time.UTC()
	if ev.AgentPID == 0 && s.proc != nil {
		ev.AgentPID = s.proc.PID()
	}
	return ev
}

func isBlank(s string) bool { return strings.TrimSpace(s) == "" }
