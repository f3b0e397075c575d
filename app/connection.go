package app

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/protocol/dialect"
	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

// connection is one runtime endpoint and what it has
// (docs/behaviour.md#connections): the launched process with its JSON-RPC
// connection and exit watcher (runtime), the router that hands each
// message to the session it names, what the handshake reported, the
// protocol version it settled, and the measurement armed for the process.
// Sessions are opened on it; each leaves it through leave, the one stop
// path. A connection opened by Start carries one session and is torn
// down when it leaves; a Host's is torn down when its keeper says so (no
// session left and none kept warm).
//
// A connection opened by Start carries one session, which the router
// hands every message (backpressure, as on a process of its own); a
// Host's connection is shared: sessions are routed by id and each
// delivers its events on its own outbox (docs/behaviour.md#runtime-host).
type connection struct {
	opts  Options // the process's scope: launcher, command, protocol, sandbox, workspace, measurement, clock, logger, client info
	log   *slog.Logger
	clock ports.Clock

	rt     *runtime
	router *router
	meter  *meter
	// backlog bounds each session's undelivered events on a shared
	// connection (HostOptions.EventBacklog).
	backlog int
	// keeper decides what becomes of the connection when a session leaves
	// it; nil: torn down with its last session.
	keeper keeper

	// agent is what the handshake reported and dialect the protocol
	// version it settled, set once by handshake.
	agent   domain.AgentInfo
	dialect dialect.Dialect
	// announced is the workspace the initialize answer announced, "" for
	// none (serverworkspace.go).
	announced string
}

// keeper is told when a session leaves a shared connection and decides
// whether the connection is torn down now (a Host: when it carries no
// session and is not kept warm).
type keeper interface {
	// release gives back the seat of s, which left the connection; stop
	// says whether the connection is to be torn down now, by the caller.
	release(s *Session) (stop bool)
}

// newConnection assembles a connection; nothing is started before open.
func newConnection(o Options, shared bool) *connection {
	log := o.Logger.With("component", "acp_session")
	c := &connection{opts: o, log: log, clock: o.Clock,
		rt:     newRuntime(log, o.Clock, o.drainBound),
		router: newRouter(log, shared),
		meter:  newMeter(o.MeasurementSources, log),
	}
	readTimeout := o.Settings.EffectiveReadTimeout()
	c.router.refuse = func(req jsonrpc.Request) {
		ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
		defer cancel()
		if err := c.rt.client.ReplyError(ctx, req, jsonrpc.CodeInvalidParams, "unknown session"); err != nil {
			log.Debug("could not answer an agent request", "method", req.Method, "error", err)
		}
	}
	return c
}

// shared reports whether sessions share the connection (a Host's).
func (c *connection) shared() bool { return c.router.shared }

// prepare runs start-up steps 1 and 2 (docs/behaviour.md#start-up): the
// command is checked and the launcher prepares it, told which hosts could
// not be reached; settings written for SSH hosts refuse a plan that runs
// the runtime on this machine.
func (c *connection) prepare(unreachable []string) (ports.Plan, error) {
	set := c.opts.Settings
	// A launcher that needs no command takes none; a command given with a
	// blank program is a mistake whatever the launcher.
	if len(set.Command) == 0 && !needsNoCommand(c.opts.Launcher) || len(set.Command) > 0 && strings.TrimSpace(set.Command[0]) == "" {
		return nil, domain.NewError(domain.KindAgentNotFound, domain.MsgEmptyCommand).WithReason(domain.ReasonConfigurationInvalid)
	}
	plan, err := c.opts.Launcher.Prepare(ports.LaunchRequest{Command: set.Command, Workspace: c.opts.Workspace, Avoid: unreachable,
		Sandbox: set.Sandbox, AddDirs: set.Session.AdditionalDirectories})
	if err != nil {
		return nil, keepKind(err, msgStartFailed)
	}
	target := plan.Target()
	if err := remoteMismatch(set, target); err != nil {
		discard(plan)
		return nil, err
	}
	if slices.Contains(unreachable, target.Host) {
		discard(plan)
		return nil, domain.WrapError(domain.KindPortExit, msgNoHostLeft, domain.ErrHostUnreachable)
	}
	c.rt.target = target
	return plan, nil
}

// commandFree is a launcher that declares it needs no command: it runs
// one program whatever the command says (adapters/inprocess). Every other
// launcher is never handed an empty command (docs/behaviour.md#start-up).
type commandFree interface {
	// NeedsNoCommand reports that Settings.Command may be left empty.
	NeedsNoCommand() bool
}

// needsNoCommand reports whether l declares it needs no command.
func needsNoCommand(l ports.Launcher) bool {
	cf, ok := l.(commandFree)
	return ok && cf.NeedsNoCommand()
}

// open runs start-up steps 1 to 5 for a connection that starts with no
// session on it (a session store): the workspace is checked, the command
// prepared, the process started and the handshake performed.
func (c *connection) open(ctx context.Context) error {
	if err := c.admit(ctx); err != nil {
		return err
	}
	plan, err := c.prepare(nil)
	if err == nil {
		err = c.launch(ctx, plan, nil)
	}
	if err == nil {
		err = c.handshake(ctx)
	}
	return err
}

// admit refuses a start whose context already ended or whose workspace is
// not UTF-8, before anything is prepared.
func (c *connection) admit(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return domain.WrapError(domain.KindTurnCancelled, msgStartCancelled, err)
	}
	if !utf8.ValidString(c.opts.Workspace) {
		return domain.NewError(domain.KindInvalidWorkspaceCWD, domain.MsgWorkspaceNotUTF8)
	}
	return nil
}

// launch starts the prepared plan with env (what the armed measurement
// adds) and connects the router to it; betweenTurns runs when the stream
// ends while no turn runs.
func (c *connection) launch(ctx context.Context, plan ports.Plan, env []string) error {
	if err := c.rt.start(ctx, plan, env, c.router, c.router.betweenTurns); err != nil {
		return err
	}
	id := c.rt.identity()
	program := ""
	if cmd := c.opts.Settings.Command; len(cmd) > 0 {
		program = cmd[0]
	}
	c.log.Info("agent process started", "agent_pid", id.PID, "host", id.Host, "command", program)
	return nil
}

// leave is the one stop path of a session (docs/behaviour.md#teardown):
// the session's running turn is cancelled when others stay on the
// connection, it is closed through the protocol, its route removed and
// its stream drained; when it was the connection's last session and no
// keeper keeps the connection, the whole teardown order runs instead, with
// the session's close as its step 2. It runs once, in a goroutine the
// session owns; leave returns its result, or ctx's error when ctx ends
// first while the teardown goes on.
func (c *connection) leave(ctx context.Context, s *Session) error {
	s.life.once.Do(func() {
		grace := stopGrace(s.opts.Settings)
		deadline := c.clock.Now().Add(grace)
		if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
			deadline = d
		}
		go func() {
			defer close(s.life.done)
			s.life.err = c.depart(s, deadline, grace)
		}()
	})
	select {
	case <-s.life.done:
		return s.life.err
	case <-ctx.Done():
		return fmt.Errorf("app: stop did not finish before its context ended; teardown goes on: %w", ctx.Err())
	}
}

// depart carries out leave for s, by deadline.
func (c *connection) depart(s *Session, deadline time.Time, grace time.Duration) error {
	began := c.clock.Now()
	stop := true // a connection without a keeper carries one session (Start's)
	if c.keeper != nil {
		// Others may stay, or the keeper keeps it warm: the running turn
		// is cancelled and the session ends alone, through the protocol
		// (docs/behaviour.md#runtime-host).
		s.turns.endRunning(ending{err: domain.NewError(domain.KindTurnCancelled, domain.MsgSessionStopped)})
		stop = c.keeper.release(s)
	}
	var err error
	if stop {
		err = c.stop(deadline, grace, s)
	} else {
		c.detach(s, deadline)
	}
	s.out.wait()
	s.releaseBeacon() // after the runtime's tree is gone, when it goes
	s.releaseResult()
	if stop && c.rt.proc != nil {
		s.obs.step(ports.StepTeardown, s.life.within, began, c.clock.Now(), err)
	}
	if !s.life.replaced {
		s.obs.end(c.clock.Now(), s.Capabilities(), err)
	}
	return err
}

// detach ends s alone on a connection that stays: its running turn is
// cancelled, session/close sent (bounded at half the remaining grace),
// its route removed and what its stream held reported.
func (c *connection) detach(s *Session, deadline time.Time) {
	began := c.clock.Now()
	rt := c.rt
	if id := s.ID(); s.res.endWith != "" && id != "" && rt.proc != nil && !rt.ended() && !isDone(rt.conn.Broken()) {
		rt.closeThroughProtocol(s.res.endWith, id, deadline.Sub(c.clock.Now())/2)
		s.obs.step(ports.StepCloseSession, "", began, c.clock.Now(), nil)
	}
	c.router.detach(s)
	s.turns.betweenTurns(s.stream.flush)
}

// stop tears the connection down in the fixed order of
// docs/behaviour.md#teardown, ending last (its last session, nil for
// none) through the protocol first; its stream reports what it still held
// once the connection is closed.
func (c *connection) stop(deadline time.Time, grace time.Duration, last *Session) error {
	td := teardownSteps{drained: c.router.betweenTurns, step: func(string, time.Time, time.Time, error) {}}
	if last != nil {
		td.closeMethod, td.sessionID = last.res.endWith, last.ID()
		td.step = func(name string, start, end time.Time, err error) {
			last.obs.step(name, ports.StepTeardown, start, end, err)
		}
	}
	err := c.rt.stop(deadline, grace, td)
	c.meter.release()
	if last != nil {
		c.router.detach(last)
	}
	return err
}

// shutdown tears down a connection that carries no session (a Host's
// process kept warm, or one whose start failed), within its stop grace.
func (c *connection) shutdown() error {
	grace := stopGrace(c.opts.Settings)
	return c.stop(c.clock.Now().Add(grace), grace, nil)
}

// stopGrace is the settings' stop grace, domain.DefaultStopGrace when
// unset (docs/behaviour.md#teardown).
func stopGrace(set domain.SessionSettings) time.Duration {
	if set.StopGrace <= 0 {
		return domain.DefaultStopGrace
	}
	return set.StopGrace
}
