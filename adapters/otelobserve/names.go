package otelobserve

// Span names (docs/behaviour.md#observability). A start-up step's span is
// "acpdrive.start." followed by the step's name ("acpdrive.start.launch",
// "acpdrive.start.session/new", …), a teardown step's "acpdrive.teardown."
// followed by it ("acpdrive.teardown.kill", …).
const (
	// SpanSession is a session, from before the launch to the end of its teardown.
	SpanSession = "acpdrive.session"
	// SpanTurn is a turn, from its start to its outcome; a client span.
	SpanTurn = "acpdrive.turn"
	// SpanToolCall is a tool call that reached completed or failed.
	SpanToolCall = "acpdrive.tool_call"
	// SpanTeardown is a teardown, holding its steps.
	SpanTeardown = "acpdrive.teardown"

	spanStartPrefix = "acpdrive.start."
)

// Span event names.
const (
	// EventNotice is a notice acpdrive sent itself (AttrMessage).
	EventNotice = "acpdrive.notice"
	// EventMalformed is a malformed event (AttrMessage).
	EventMalformed = "acpdrive.malformed"
	// EventPermissionDecision is the answer to one permission request
	// (AttrToolKind, AttrToolTitle, AttrPermissionDecision, AttrPermissionBy,
	// AttrPermissionOption, AttrPermissionSession, AttrMessage).
	EventPermissionDecision = "acpdrive.permission_decision"
)

// Attribute keys. acp.* name what the protocol carried, acpdrive.* what
// acpdrive decided or measured.
const (
	// AttrSessionID is the ACP session id (session and turn spans).
	AttrSessionID = "acp.session.id"
	// AttrAgentName is agentInfo.name of the handshake (session span,
	// acpdrive.sessions.running).
	AttrAgentName = "acp.agent.name"
	// AttrAgentVersion is agentInfo.version of the handshake.
	AttrAgentVersion = "acp.agent.version"
	// AttrProtocolVersion is the protocol version the handshake agreed.
	AttrProtocolVersion = "acp.protocol.version"
	// AttrRoute is how the session was resolved: session/new,
	// session/load or session/resume.
	AttrRoute = "acp.session.route"
	// AttrStopReason is the prompt response's stopReason, when there was one.
	AttrStopReason = "acp.stop_reason"
	// AttrToolKind is a tool call's normalized kind.
	AttrToolKind = "acp.tool.kind"
	// AttrToolTitle is a tool call's terminal title.
	AttrToolTitle = "acp.tool.title"

	// AttrRemote reports a runtime on another host.
	AttrRemote = "acpdrive.remote"
	// AttrCapabilityGaps lists the capability labels in the gap state.
	AttrCapabilityGaps = "acpdrive.capability.gaps"
	// AttrStep is a step span's step name (ports.Step…).
	AttrStep = "acpdrive.step"
	// AttrStartOutcome is StartStarted or StartFailed (acpdrive.start.duration).
	AttrStartOutcome = "acpdrive.start.outcome"
	// AttrTurnOutcome is the turn's outcome event type.
	AttrTurnOutcome = "acpdrive.turn.outcome"
	// AttrErrorKind is the error kind of a failure.
	AttrErrorKind = "acpdrive.error.kind"
	// AttrErrorRetryable is the retryability of a turn that did not
	// complete: its failure class's, else its error kind's.
	AttrErrorRetryable = "acpdrive.error.retryable"
	// AttrFailureClass is the failure class of a turn that did not
	// complete (docs/behaviour.md#failures).
	AttrFailureClass = "acpdrive.failure.class"
	// AttrToolDurationMS is a tool call's duration in milliseconds.
	AttrToolDurationMS = "acpdrive.tool.duration_ms"
	// AttrToolError reports a failed tool call.
	AttrToolError = "acpdrive.tool.error"
	// AttrModel is the model a turn's measured figures belong to.
	AttrModel = "acpdrive.model"
	// AttrTokenKind is the kind of figure of acpdrive.tokens: input,
	// output, cache_read, cache_write, reasoning or tool_use.
	AttrTokenKind = "acpdrive.token.kind"
	// AttrTokensInput and the keys after it are a measured turn's figures.
	AttrTokensInput = "acpdrive.tokens.input"
	// AttrTokensOutput is the turn's output tokens.
	AttrTokensOutput = "acpdrive.tokens.output"
	// AttrTokensCacheRead is the turn's cache-read tokens.
	AttrTokensCacheRead = "acpdrive.tokens.cache_read"
	// AttrTokensCacheWrite is the turn's cache-write tokens.
	AttrTokensCacheWrite = "acpdrive.tokens.cache_write"
	// AttrTokensReasoning is the turn's reasoning tokens.
	AttrTokensReasoning = "acpdrive.tokens.reasoning"
	// AttrTokensToolUse is the turn's tool-use tokens.
	AttrTokensToolUse = "acpdrive.tokens.tool_use"
	// AttrTokensTotal is the turn's total as the source reports it.
	AttrTokensTotal = "acpdrive.tokens.total"
	// AttrMessage is a span event's contract text.
	AttrMessage = "acpdrive.message"
	// AttrPermissionDecision is a permission request's decision: allow,
	// refuse, person or cancelled.
	AttrPermissionDecision = "acpdrive.permission.decision"
	// AttrPermissionBy names what decided: the preset or the rule.
	AttrPermissionBy = "acpdrive.permission.by"
	// AttrPermissionOption is the option id sent ("" when cancelled).
	AttrPermissionOption = "acpdrive.permission.option_id"
	// AttrPermissionSession is parent, child or other.
	AttrPermissionSession = "acpdrive.permission.session"
)

// Values of AttrStartOutcome.
const (
	// StartStarted: the start was kept.
	StartStarted = "started"
	// StartFailed: the start failed.
	StartFailed = "failed"
)

// Metric names.
const (
	// MetricTurns counts turns by AttrTurnOutcome.
	MetricTurns = "acpdrive.turns"
	// MetricToolCalls counts tool calls by AttrToolKind and AttrToolError.
	MetricToolCalls = "acpdrive.tool_calls"
	// MetricTokens counts measured tokens by AttrModel and AttrTokenKind.
	MetricTokens = "acpdrive.tokens"
	// MetricStartDuration is the histogram of start durations (seconds).
	MetricStartDuration = "acpdrive.start.duration"
	// MetricTeardownDuration is the histogram of teardown durations (seconds).
	MetricTeardownDuration = "acpdrive.teardown.duration"
	// MetricSessionsRunning counts the sessions started and not yet torn down.
	MetricSessionsRunning = "acpdrive.sessions.running"
)
