package app

import (
	"context"

	"github.com/acpdrive/acpdrive/domain"
)

// armBeacon arms the tool-server confirmation when the configuration asks
// for it (docs/behaviour.md#tool-server-confirmation) and returns the
// servers to declare: the operator's, then the beacon. A remote launch
// declares no beacon; an operator file that already
// declares the beacon's name failed the start when it was loaded
// (reservedFor).
func (s *Session) armBeacon(ctx context.Context, servers []domain.MCPServer) ([]domain.MCPServer, error) {
	if !s.opts.Settings.ConfirmToolServers {
		return servers, nil
	}
	if s.conn.rt.target.Remote() {
		s.log.Info("a remote launch delivers no MCP servers; no tool-server beacon is declared", "host", s.conn.rt.target.Host)
		return servers, nil
	}
	b, err := s.opts.ToolServerBeacon.Arm(ctx)
	if err != nil {
		return nil, keepKind(err, msgBeaconArm+": "+err.Error())
	}
	s.tools.beacon = b
	return append(append([]domain.MCPServer{}, servers...), b.Server()), nil
}

// msgBeaconArm is the message of a start that could not arm the beacon.
const msgBeaconArm = "could not arm the tool-server beacon"

// confirmToolServers waits, after the session was created or continued,
// for the runtime to complete MCP initialize with the beacon, at most the
// configured bound. Confirmed: "tool servers" is marked confirmed. Not
// within the bound, or the runtime's stream ended first: it is lowered,
// and the first turn carries the notice saying why. Only a cancelled ctx
// fails the start.
func (s *Session) confirmToolServers(ctx context.Context) error {
	if s.tools.beacon == nil {
		return nil
	}
	bound := s.opts.Settings.EffectiveConfirmToolServersTimeout()
	check := &domain.ToolServerCheck{BoundMS: bound.Milliseconds()}
	began := s.clock.Now()
	initialized := s.tools.beacon.Initialized()
	select {
	case <-initialized:
	case <-s.clock.After(bound):
	case <-s.conn.rt.conn.Done(): // the runtime is gone: nothing will start the beacon now
	case <-ctx.Done():
		return domain.WrapError(domain.KindTurnCancelled, msgStartCancelled, ctx.Err())
	}
	confirmed := false
	select {
	case <-initialized: // also when it raced the bound or the stream's end
		confirmed = true
	default:
	}
	if confirmed {
		check.Confirmed = true
		check.MCPClient = s.tools.beacon.MCPClient()
		s.caps.confirm(domain.CapToolServers)
		s.log.Info("tool servers confirmed", "mcp_client", check.MCPClient, "bound", bound, "waited", s.clock.Now().Sub(began))
	} else {
		check.Reason = domain.ToolServersNotConfirmed(bound)
		s.caps.lower(domain.CapToolServers)
		s.log.Warn("tool servers not confirmed", "bound", bound)
	}
	s.res.agent.ToolServers = check
	return nil
}

// releaseBeacon releases the beacon at teardown. A beacon that reported
// only after the bound is logged: the verdict stands (a capability is never
// raised).
func (s *Session) releaseBeacon() {
	if s.tools.beacon == nil {
		return
	}
	if c := s.res.agent.ToolServers; c != nil && !c.Confirmed && isDone(s.tools.beacon.Initialized()) {
		s.log.Info("the tool-server beacon was initialized after the bound; the verdict stands", "mcp_client", s.tools.beacon.MCPClient())
	}
	if err := s.tools.beacon.Release(); err != nil {
		s.log.Debug("could not release the tool-server beacon", "error", err)
	}
}
