package domain

// AgentInfo is what a runtime said about itself in the handshake, in the
// domain's terms (docs/behaviour.md#capabilities).
type AgentInfo struct {
	// Name is agentInfo.name, "" when the runtime sent no agentInfo.
	Name string `json:"name"`
	// Title is agentInfo.title, when sent.
	Title string `json:"title,omitempty"`
	// Version is agentInfo.version, "" when not sent.
	Version string `json:"version"`
	// Reported is false when the runtime sent no agentInfo at all.
	Reported bool `json:"reported"`
	// ProtocolVersion is the protocol version the runtime answered.
	ProtocolVersion int `json:"protocol_version"`
	// Advertised is what the runtime advertised.
	Advertised Advertised `json:"advertised"`
	// ToolServers is the verdict of the tool-server confirmation; nil
	// when the session did not ask for it or delivers no servers
	// (docs/behaviour.md#tool-server-confirmation).
	ToolServers *ToolServerCheck `json:"tool_servers,omitempty"`
	// Posture is where the session's mode, model and options stand once
	// its configuration was applied; nil when the runtime reports none
	// (docs/behaviour.md#session-configuration).
	Posture *SessionPosture `json:"session_config,omitempty"`
}

// Advertised is the capability set a runtime advertised in its handshake.
type Advertised struct {
	// LoadSession is agentCapabilities.loadSession.
	LoadSession bool `json:"load_session"`
	// Resume, Close, Delete and List are the sessionCapabilities markers.
	Resume bool `json:"resume"`
	Close  bool `json:"close"`
	Delete bool `json:"delete"`
	List   bool `json:"list"`
	// Fork is the (unstable) sessionCapabilities.fork marker.
	Fork bool `json:"fork"`
	// SessionMarkers lists every sessionCapabilities key present: the
	// schema's markers in schema order, then every other key sorted (also
	// those acpdrive does not use, such as systemPrompt or title).
	SessionMarkers []string `json:"session_markers"`
	// SessionDetails holds, per session capability whose value is more
	// than an empty marker, that value in compact JSON.
	SessionDetails map[string]string `json:"session_details,omitempty"`
	// SystemPromptModes lists the system prompt modes
	// sessionCapabilities.systemPrompt advertises ("append", then those of
	// its mode object); nil when it is not advertised.
	SystemPromptModes []string `json:"system_prompt_modes,omitempty"`
	// AuthCapabilities lists the keys of agentCapabilities.auth (such as
	// logout), sorted.
	AuthCapabilities []string `json:"auth_capabilities,omitempty"`
	// Providers reports whether agentCapabilities.providers is present;
	// ProviderKeys lists its keys, sorted.
	Providers    bool     `json:"providers,omitempty"`
	ProviderKeys []string `json:"provider_keys,omitempty"`
	// MetaKeys lists the keys of agentCapabilities._meta, one level deep
	// ("claudeCode.promptQueueing"), sorted; ResultMetaKeys those of the
	// initialize result's own _meta.
	MetaKeys       []string `json:"meta_keys,omitempty"`
	ResultMetaKeys []string `json:"result_meta_keys,omitempty"`
	// AuthMethodDetails are initialize's authMethods as sent.
	AuthMethodDetails []AuthMethod `json:"auth_method_details,omitempty"`
	// MCPHTTP and MCPSSE are agentCapabilities.mcpCapabilities.
	MCPHTTP bool `json:"mcp_http"`
	MCPSSE  bool `json:"mcp_sse"`
	// PromptImage, PromptAudio and PromptEmbeddedContext are
	// agentCapabilities.promptCapabilities.
	PromptImage           bool `json:"prompt_image"`
	PromptAudio           bool `json:"prompt_audio"`
	PromptEmbeddedContext bool `json:"prompt_embedded_context"`
	// AuthMethods are the ids of initialize's authMethods, in order.
	AuthMethods []string `json:"auth_methods"`
	// Steering is _meta.steering.supported of initialize: the runtime
	// takes _session/steering (docs/behaviour.md#steering).
	Steering bool `json:"steering"`
}

// AuthMethod is one authentication method a runtime offers.
type AuthMethod struct {
	ID          string `json:"id"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	Type        string `json:"type,omitempty"`
}
