package app

import (
	"context"
	"encoding/json"
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

	// Set once the start-up calls have answered; read-only afterwards.
	sessionID   string
	init        acpwire.InitializeResponse
	closeMethod string

	emitMu sync.Mutex // serializes OnEvent calls

	mu           sync.Mutex // guards the fields below
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

	outputLost atomic.Bool // the drain bound elapsed after the reap

	stopping chan struct{}
	stopOnce sync.Once
	stopErr  error
	wg       sync.WaitGroup
}

// Start launches the runtime, performs the handshake and creates the
// session. On failure the process is torn down in the fixed order, a
// startup_failed event is emitted, and the returned error is a
// *domain.AgentError.
func Start(ctx context.Context, opts Options) (*Session, error) {
	opts.withDefaults()
	s := &Session{
		opts:     opts,
		log:      opts.Logger.With("component", "acp_session"),
		tools:    make(map[string]*toolRecord),
		stopping: make(chan struct{}),
		caps:     domain.NewCapabilities(false, false),
	}
	if err := s.start(ctx); err != nil {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.Config.StopGrace+5*time.Second)
		defer cancel()
		_ = s.Stop(stopCtx)
		s.emit(domain.Event{Type: domain.EventStartupFailed, Message: err.Error(), AgentPID: s.PID()})
		return nil, err
	}
	return s, nil
}

func (s *Session) start(ctx context.Context) error {
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

	if err := s.initialize(ctx); err != nil {
		return err
	}
	if err := s.newSession(ctx); err != nil {
		return err
	}
	return nil
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
	s.mu.Lock()
	if resp.AgentInfo == nil {
		s.caps.Lower(domain.CapAgentVersion)
	}
	sc := resp.AgentCapabilities.SessionCapabilities
	if !resp.AgentCapabilities.LoadSession && !sc.CanResume() {
		s.caps.Lower(domain.CapSessionContinuation)
	}
	s.mu.Unlock()
	if sc.CanClose() {
		s.closeMethod = acpwire.MethodSessionClose
	}
	info := resp.AgentInfo
	if info == nil {
		info = &acpwire.Implementation{}
	}
	s.log.Info("agent implementation", "agent_name", info.Name, "agent_version", info.Version,
		"load_session", resp.AgentCapabilities.LoadSession, "close", sc.CanClose(), "resume", sc.CanResume())
	return nil
}

func (s *Session) newSession(ctx context.Context) error {
	req := acpwire.NewSessionRequest{CWD: s.opts.Workspace, MCPServers: []json.RawMessage{}}
	var resp acpwire.NewSessionResponse
	if err := s.startupCall(ctx, acpwire.MethodSessionNew, req, &resp, s.opts.Config.EffectiveReadTimeout()); err != nil {
		return err
	}
	if resp.SessionID == "" {
		return domain.NewError(domain.KindResponseError, "session/new answered no sessionId")
	}
	s.mu.Lock()
	s.sessionID = resp.SessionID
	s.idKnown = true
	s.mu.Unlock()
	s.log.Info("agent session created", "session_id", resp.SessionID, "agent_pid", s.proc.PID())
	return nil
}

// ID is the identifier of the session the runtime created.
func (s *Session) ID() string { return s.sessionID }

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

func (s *Session) emit(ev domain.Event) {
	if ev.Time.IsZero() {
		ev.Time = s.opts.Clock.Now()
	}
	ev.Time = ev.Time.UTC()
	if ev.AgentPID == 0 && s.proc != nil {
		ev.AgentPID = s.proc.PID()
	}
	s.emitMu.Lock()
	defer s.emitMu.Unlock()
	s.opts.OnEvent(ev)
}

func isBlank(s string) bool { return strings.TrimSpace(s) == "" }
