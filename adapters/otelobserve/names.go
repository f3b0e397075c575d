package otelobserve

// Span names (docs/behaviour.md#observability). A step's span is named
// after its phase and step: "acpdrive.start.launch",
// "acpdrive.start.session/new", "acpdrive.teardown.kill", … and the
// teardown as a whole "acpdrive.teardown".
const (
	SpanSession     = "acpdrive.session"
	SpanTurn        = "acpdrive.turn"
	SpanToolCall    = "acpdrive.tool_call"
	spanStartPrefix = "acpdrive.start."
	SpanTeardown    = "acpdrive.teardown"
)

// Span event names.
const (
	EventNotice    = "acpdrive.notice"
	EventMalformed = "acpdrive.malformed"
)

// Attribute keys. acp.* name what the protocol carries, acpdrive.* what
// acpdrive decided or measured.
const (
	AttrSessionID       = "acp.session.id"
	AttrAgentName       = "acp.agent.name"
	AttrAgentVersion    = "acp.agent.version"
	AttrProtocolVersion = "acp.protocol.version"
	AttrRoute           = "acp.session.route"
	AttrStopReason      = "acp.stop_reason"
	AttrToolKind        = "acp.tool.kind"
	AttrToolTitle       = "acp.tool.title"

	AttrRemote           = "acpdrive.remote"
	AttrCapabilityGaps   = "acpdrive.capability.gaps"
	AttrStep             = "acpdrive.step"
	AttrStartOutcome     = "acpdrive.start.outcome"
	AttrTurnOutcome      = "acpdrive.turn.outcome"
	AttrErrorKind        = "acpdrive.error.kind"
	AttrErrorRetryable   = "acpdrive.error.retryable"
	AttrToolDurationMS   = "acpdrive.tool.duration_ms"
	AttrToolError        = "acpdrive.tool.error"
	AttrModel            = "acpdrive.model"
	AttrTokenKind        = "acpdrive.token.kind"
	AttrTokensInput      = "acpdrive.tokens.input"
	AttrTokensOutput     = "acpdrive.tokens.output"
	AttrTokensCacheRead  = "acpdrive.tokens.cache_read"
	AttrTokensCacheWrite = "acpdrive.tokens.cache_write"
	AttrTokensReasoning  = "acpdrive.tokens.reasoning"
	AttrTokensToolUse    = "acpdrive.tokens.tool_use"
	AttrTokensTotal      = "acpdrive.tokens.total"
	AttrMessage          = "acpdrive.message"
)

// Values of AttrStartOutcome.
const (
	StartStarted = "started"
	StartFailed  = "failed"
)

// Metric names.
const (
	MetricTurns            = "acpdrive.turns"
	MetricToolCalls        = "acpdrive.tool_calls"
	MetricTokens           = "acpdrive.tokens"
	MetricStartDuration    = "acpdrive.start.duration"
	MetricTeardownDuration = "acpdrive.teardown.duration"
	MetricSessionsRunning  = "acpdrive.sessions.running"
)
