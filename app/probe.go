package app

import (
	"context"

	"github.com/acpdrive/acpdrive/domain"
)

// ProbeReport is what a runtime advertises, as acpdrive sees it, and what
// acpdrive would do with it. Its JSON form is the CLI's `probe --json`.
type ProbeReport struct {
	// PID is the probed process's ID.
	PID int `json:"agent_pid"`
	// ProtocolVersion is the version initialize answered.
	ProtocolVersion int `json:"protocol_version"`
	// AgentInfo is initialize's agentInfo, nil when absent.
	AgentInfo *ProbeAgent `json:"agent_info"`
	// LoadSession is agentCapabilities.loadSession.
	LoadSession bool `json:"load_session"`
	// PromptCapabilities is agentCapabilities.promptCapabilities.
	PromptCapabilities ProbePrompt `json:"prompt_capabilities"`
	// MCPCapabilities is agentCapabilities.mcpCapabilities.
	MCPCapabilities ProbeMCP `json:"mcp_capabilities"`
	// SessionCapabilities lists the advertised sessionCapabilities markers
	// acpdrive reads, in schema order.
	SessionCapabilities []string `json:"session_capabilities"`
	// AuthMethods are the ids of initialize's authMethods.
	AuthMethods []ProbeAuthMethod `json:"auth_methods"`
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
	// ToolServers is the verdict of the tool-server confirmation, when
	// Settings.ConfirmToolServers asked for it (the probe then creates a
	// session, docs/behaviour.md#tool-server-confirmation); nil otherwise.
	ToolServers *domain.ToolServerCheck `json:"tool_servers,omitempty"`
	// Agent is the whole handshake record in the domain's terms.
	Agent domain.AgentInfo `json:"agent"`
	// ClaimedBy names the measurement source that would claim the command
	// ("" when none, and always "" for a remote launch).
	ClaimedBy string `json:"claimed_by"`
	// MeasuredBy names the source that measures the runtime the handshake
	// named, after a restart to settle when it differs from ClaimedBy ("":
	// the session would be unmeasured).
	MeasuredBy string `json:"measured_by"`
}

// ProbeAgent is the runtime's self-description.
type ProbeAgent struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// ProbePrompt lists the content types a prompt may carry.
type ProbePrompt struct {
	Image           bool `json:"image"`
	Audio           bool `json:"audio"`
	EmbeddedContext bool `json:"embeddedContext"`
}

// ProbeMCP lists the MCP transports beyond stdio the runtime takes.
type ProbeMCP struct {
	HTTP bool `json:"http"`
	SSE  bool `json:"sse"`
}

// ProbeAuthMethod is one authentication method the runtime offers.
type ProbeAuthMethod struct {
	ID string `json:"id"`
}

// Probe starts the runtime, performs the handshake and the negative
// control, reports what the runtime advertises, and stops it through the
// normal teardown. It creates no session, so nothing is stored on the
// runtime's side, unless Settings.ConfirmToolServers asks for the tool-server
// confirmation: servers are declared on session/new only, so the probe
// then creates one session and waits for the verdict.
func Probe(ctx context.Context, opts Options) (ProbeReport, error) {
	opts, err := opts.resolved()
	if err != nil {
		return ProbeReport{}, refused(opts, err)
	}
	s := newSession(opts, &observation{plain: opts.Observers}) // a probe is no session: its events reach Observe
	s.meter.plan = measurePlan{settled: true}                  // a probe measures nothing
	if err := s.open(ctx, nil); err != nil {
		s.fail(ctx, err)
		return ProbeReport{}, err
	}
	c := &continuation{client: s.rt.client, clock: s.clock, log: s.log, stream: s.stream, readTimeout: opts.Settings.EffectiveReadTimeout()}
	control := c.negativeControl(ctx)
	if err := s.probeToolServers(ctx); err != nil {
		s.fail(ctx, err)
		return ProbeReport{}, err
	}
	a := s.agent
	adv := a.Advertised
	r := ProbeReport{
		PID:                 s.PID(),
		ProtocolVersion:     a.ProtocolVersion,
		LoadSession:         adv.LoadSession,
		PromptCapabilities:  ProbePrompt{Image: adv.PromptImage, Audio: adv.PromptAudio, EmbeddedContext: adv.PromptEmbeddedContext},
		MCPCapabilities:     ProbeMCP{HTTP: adv.MCPHTTP, SSE: adv.MCPSSE},
		SessionCapabilities: adv.SessionMarkers,
		AuthMethods:         []ProbeAuthMethod{},
		NegativeControl:     control,
		ContinuationRoute:   ContinuationRoute(adv),
		TeardownMethod:      s.endWith,
		Capabilities:        s.Capabilities(),
		Agent:               a,
		ToolServers:         a.ToolServers,
	}
	if !s.rt.target.Remote() {
		for _, src := range opts.MeasurementSources {
			if r.ClaimedBy == "" && src.Claims(opts.Settings.Command) {
				r.ClaimedBy = src.Name()
			}
		}
		if src := s.meter.byRuntime(a.Name); src != nil {
			r.MeasuredBy = src.Name()
		}
	}
	if a.Reported {
		r.AgentInfo = &ProbeAgent{Name: a.Name, Title: a.Title, Version: a.Version}
	}
	for _, id := range adv.AuthMethods {
		r.AuthMethods = append(r.AuthMethods, ProbeAuthMethod{ID: id})
	}
	return r, s.stopWithin(ctx)
}

// probeToolServers creates the session the tool-server confirmation needs
// and waits for its verdict; nothing when the beacon is not armed.
func (s *Session) probeToolServers(ctx context.Context) error {
	if s.beacon == nil {
		return nil
	}
	if err := s.createSession(ctx); err != nil {
		return err
	}
	return s.confirmToolServers(ctx)
}
