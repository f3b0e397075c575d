package app

import (
	"context"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
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
	// SessionCapabilities lists every sessionCapabilities key advertised:
	// the schema's markers in schema order, then every other key, sorted.
	SessionCapabilities []string `json:"session_capabilities"`
	// SessionCapabilityValues holds the value (compact JSON) of each
	// session capability that is more than an empty marker.
	SessionCapabilityValues map[string]string `json:"session_capability_values,omitempty"`
	// AuthMethods are initialize's authMethods.
	AuthMethods []ProbeAuthMethod `json:"auth_methods"`
	// AuthCapabilities lists the keys of agentCapabilities.auth (logout, …).
	AuthCapabilities []string `json:"auth_capabilities"`
	// Providers is nil when agentCapabilities.providers is absent, else
	// its keys (possibly none).
	Providers []string `json:"providers"`
	// MetaKeys lists the keys of agentCapabilities._meta, one level deep;
	// ResultMetaKeys those of the initialize result's own _meta.
	MetaKeys       []string `json:"meta_keys"`
	ResultMetaKeys []string `json:"result_meta_keys,omitempty"`
	// Steering is whether initialize advertised _meta.steering.supported
	// (docs/behaviour.md#steering).
	Steering bool `json:"steering"`
	// Session is what a throwaway session showed, when
	// ProbeOptions.Session asked for one; nil otherwise.
	Session *ProbeSession `json:"session,omitempty"`
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
	ID          string `json:"id"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	Type        string `json:"type,omitempty"`
}

// ProbeSession is what a throwaway session showed
// (docs/behaviour.md#probe).
type ProbeSession struct {
	// SessionID is the id session/new answered.
	SessionID string `json:"session_id"`
	// CurrentMode is the mode the session started in ("" when the runtime
	// reports no modes); Modes lists those it offers.
	CurrentMode string      `json:"current_mode"`
	Modes       []ProbeMode `json:"modes"`
	// ConfigOptions are the session's configuration options with their
	// values: session/new's, replaced by a later config_option_update.
	ConfigOptions []domain.ConfigOption `json:"config_options"`
	// CurrentModel is the (unstable) current model; Models those offered.
	CurrentModel string       `json:"current_model,omitempty"`
	Models       []ProbeModel `json:"models"`
	// Commands are the commands an available_commands_update offered
	// within the wait; nil when none arrived.
	Commands []domain.Command `json:"commands"`
	// EndedWith is how the session was disposed of: session/delete,
	// session/close, or "" (the process was stopped).
	EndedWith string `json:"ended_with"`
}

// ProbeMode is one mode a session can be in.
type ProbeMode struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// ProbeModel is one model a session can use.
type ProbeModel struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// probeCommandsWait bounds how long a session probe waits for the
// commands a runtime announces after session/new.
const probeCommandsWait = 2 * time.Second

// Probe starts the runtime, performs the handshake and the negative
// control, reports what the runtime advertises, and stops it through the
// normal teardown. It creates no session, so nothing is stored on the
// runtime's side, unless Settings.ConfirmToolServers asks for the tool-server
// confirmation: servers are declared on session/new only, so the probe
// then creates one session and waits for the verdict. po, at most one,
// asks for more (ProbeOptions.Session).
func Probe(ctx context.Context, opts Options, po ...ProbeOptions) (ProbeReport, error) {
	opts, err := opts.resolved()
	if err != nil {
		return ProbeReport{}, refused(opts, err)
	}
	var seen *probeSeen
	if probeOptions(po).Session {
		seen = newProbeSeen()
		onEvent := opts.OnEvent
		opts.OnEvent = func(ev domain.Event) {
			seen.event(ev)
			onEvent(ev)
		}
	}
	s := newSession(newConnection(opts, false), opts, &observation{plain: opts.Observers}) // a probe is no session: its events reach Observe
	s.conn.meter.plan = measurePlan{settled: true}                                         // a probe measures nothing
	if err := s.open(ctx, nil); err != nil {
		s.fail(ctx, err)
		return ProbeReport{}, err
	}
	c := &continuation{client: s.conn.rt.client, clock: s.clock, log: s.log, stream: s.stream, readTimeout: opts.Settings.EffectiveReadTimeout()}
	control := c.negativeControl(ctx)
	if err := s.probeToolServers(ctx); err != nil {
		s.fail(ctx, err)
		return ProbeReport{}, err
	}
	teardown := s.res.endWith // how a session would end, before the probe's own choice
	var session *ProbeSession
	if seen != nil {
		ps, err := s.probeSession(ctx, seen)
		if err != nil {
			s.fail(ctx, err)
			return ProbeReport{}, err
		}
		session = ps
	}
	a := s.res.agent
	adv := a.Advertised
	r := ProbeReport{
		PID:                     s.PID(),
		ProtocolVersion:         a.ProtocolVersion,
		LoadSession:             adv.LoadSession,
		PromptCapabilities:      ProbePrompt{Image: adv.PromptImage, Audio: adv.PromptAudio, EmbeddedContext: adv.PromptEmbeddedContext},
		MCPCapabilities:         ProbeMCP{HTTP: adv.MCPHTTP, SSE: adv.MCPSSE},
		SessionCapabilities:     adv.SessionMarkers,
		SessionCapabilityValues: adv.SessionDetails,
		AuthMethods:             []ProbeAuthMethod{},
		AuthCapabilities:        nonNil(adv.AuthCapabilities),
		MetaKeys:                nonNil(adv.MetaKeys),
		ResultMetaKeys:          adv.ResultMetaKeys,
		Steering:                adv.Steering,
		Session:                 session,
		NegativeControl:         control,
		ContinuationRoute:       ContinuationRoute(adv),
		TeardownMethod:          teardown,
		Capabilities:            s.Capabilities(),
		Agent:                   a,
		ToolServers:             a.ToolServers,
	}
	if !s.conn.rt.target.Remote() {
		for _, src := range opts.MeasurementSources {
			if r.ClaimedBy == "" && src.Claims(opts.Settings.Command) {
				r.ClaimedBy = src.Name()
			}
		}
		if src := s.conn.meter.byRuntime(a.Name); src != nil {
			r.MeasuredBy = src.Name()
		}
	}
	if a.Reported {
		r.AgentInfo = &ProbeAgent{Name: a.Name, Title: a.Title, Version: a.Version}
	}
	if adv.Providers {
		r.Providers = nonNil(adv.ProviderKeys)
	}
	for _, m := range adv.AuthMethodDetails {
		r.AuthMethods = append(r.AuthMethods, ProbeAuthMethod{ID: m.ID, Name: m.Name, Description: m.Description, Type: m.Type})
	}
	if r.MeasuredBy != "" {
		// The record a session would start with: measured by that source.
		r.Capabilities = measuredRecord(r.Capabilities, s.conn.rt.target.Remote())
	}
	return r, s.stopWithin(ctx)
}

// probeToolServers creates the session the tool-server confirmation needs
// and waits for its verdict; nothing when the beacon is not armed.
func (s *Session) probeToolServers(ctx context.Context) error {
	if s.tools.beacon == nil {
		return nil
	}
	if err := s.createSession(ctx); err != nil {
		return err
	}
	return s.confirmToolServers(ctx)
}

// measuredRecord is caps with token counts at ours: the record of a
// session the source the handshake confirms would measure.
func measuredRecord(caps domain.Capabilities, remote bool) domain.Capabilities {
	out := domain.NewCapabilities(remote, true)
	for _, label := range domain.CapabilityOrder {
		if label != domain.CapTokenCounts && caps.State(label) == domain.CapGap {
			out.Lower(label)
		}
	}
	for _, label := range domain.CapabilityOrder {
		if caps.Confirmed(label) {
			out.Confirm(label)
		}
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// probeSeen collects what a probe's session announces through updates.
type probeSeen struct {
	mu       sync.Mutex
	commands []domain.Command
	options  []domain.ConfigOption
	mode     string
	got      chan struct{} // closed at the first commands_available
	once     sync.Once
}

func newProbeSeen() *probeSeen { return &probeSeen{got: make(chan struct{})} }

func (p *probeSeen) event(ev domain.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ev.Type {
	case domain.EventCommandsAvailable:
		p.commands = append([]domain.Command{}, ev.Commands...)
		p.once.Do(func() { close(p.got) })
	case domain.EventConfigOptions:
		p.options = ev.ConfigOptions
	case domain.EventModeChanged:
		p.mode = ev.ModeID
	}
}

// probeSession creates the throwaway session (or uses the one the
// tool-server confirmation created), waits a bounded time for the commands
// it announces, and chooses how the teardown disposes of it: session/delete
// where advertised, else session/close.
func (s *Session) probeSession(ctx context.Context, seen *probeSeen) (*ProbeSession, error) {
	if s.res.created == nil {
		if err := s.createSession(ctx); err != nil {
			return nil, err
		}
	}
	wait := min(s.opts.Settings.EffectiveReadTimeout(), probeCommandsWait)
	select {
	case <-seen.got:
	case <-s.clock.After(wait):
		s.log.Debug("no available_commands_update within the probe's wait", "wait_ms", wait.Milliseconds())
	case <-ctx.Done():
		return nil, domain.WrapError(domain.KindTurnCancelled, msgStartCancelled, ctx.Err())
	}
	resp := s.res.created
	ps := &ProbeSession{SessionID: resp.SessionID, Modes: []ProbeMode{}, Models: []ProbeModel{}, ConfigOptions: configOptions(resp.ConfigOptions)}
	if m := resp.Modes; m != nil {
		ps.CurrentMode = m.CurrentModeID
		for _, mode := range m.AvailableModes {
			ps.Modes = append(ps.Modes, ProbeMode{ID: mode.ID, Name: mode.Name, Description: mode.Description})
		}
	}
	if m := resp.Models; m != nil {
		ps.CurrentModel = m.CurrentModelID
		for _, model := range m.AvailableModels {
			ps.Models = append(ps.Models, ProbeModel{ID: model.ModelID, Name: model.Name, Description: model.Description})
		}
	}
	seen.mu.Lock()
	ps.Commands = seen.commands
	if seen.options != nil {
		ps.ConfigOptions = seen.options
	}
	if seen.mode != "" {
		ps.CurrentMode = seen.mode
	}
	seen.mu.Unlock()
	if s.res.agent.Advertised.Delete {
		s.res.endWith = acpwire.MethodSessionDelete
	}
	ps.EndedWith = s.res.endWith
	return ps, nil
}
