package app

import (
	"context"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
)

// ProbeReport is what a runtime advertises, as acpdrive sees it, and what
// acpdrive would do with it.
type ProbeReport struct {
	// PID is the probed process's ID.
	PID int `json:"agent_pid"`
	// ProtocolVersion is the version initialize answered.
	ProtocolVersion int `json:"protocol_version"`
	// AgentInfo is initialize's agentInfo, nil when absent.
	AgentInfo *acpwire.Implementation `json:"agent_info"`
	// LoadSession is agentCapabilities.loadSession.
	LoadSession bool `json:"load_session"`
	// PromptCapabilities is agentCapabilities.promptCapabilities.
	PromptCapabilities acpwire.PromptCapabilities `json:"prompt_capabilities"`
	// MCPCapabilities is agentCapabilities.mcpCapabilities.
	MCPCapabilities acpwire.MCPCapabilities `json:"mcp_capabilities"`
	// SessionCapabilities lists the advertised sessionCapabilities markers.
	SessionCapabilities []string `json:"session_capabilities"`
	// AuthMethods is initialize's authMethods.
	AuthMethods []acpwire.AuthMethod `json:"auth_methods"`
	// NegativeControl is how the runtime answered an unknown "_" method.
	NegativeControl NegativeControl `json:"negative_control"`
	// ContinuationRoute is the method a saved session would be continued
	// through, "" when only session/new is possible.
	ContinuationRoute string `json:"continuation_route"`
	// TeardownMethod is how a session would end through the protocol, ""
	// when only process termination ends it.
	TeardownMethod string `json:"teardown_method"`
	// Capabilities is the capability record a session would start with.
	Capabilities domain.Capabilities `json:"capabilities"`
}

// Probe starts the runtime, performs the handshake and the negative
// control, reports what the runtime advertises, and stops it through the
// normal teardown. It creates no session, so nothing is stored on the
// runtime's side.
func Probe(ctx context.Context, opts Options) (ProbeReport, error) {
	opts.withDefaults()
	s := newSession(opts, false)
	if err := s.open(ctx); err != nil {
		s.fail(ctx, err)
		return ProbeReport{}, err
	}
	control := s.negativeControl(ctx)
	init := s.init
	sc := init.AgentCapabilities.SessionCapabilities
	r := ProbeReport{
		PID:                 s.PID(),
		ProtocolVersion:     init.ProtocolVersion,
		AgentInfo:           init.AgentInfo,
		LoadSession:         init.AgentCapabilities.LoadSession,
		PromptCapabilities:  init.AgentCapabilities.PromptCapabilities,
		MCPCapabilities:     init.AgentCapabilities.MCPCapabilities,
		SessionCapabilities: sc.Advertised(),
		AuthMethods:         init.AuthMethods,
		NegativeControl:     control,
		ContinuationRoute:   ContinuationRoute(init),
		TeardownMethod:      s.closeMethod,
		Capabilities:        s.Capabilities(),
	}
	if r.AuthMethods == nil {
		r.AuthMethods = []acpwire.AuthMethod{}
	}
	return r, s.Stop(context.WithoutCancel(ctx))
}
