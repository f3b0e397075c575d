package domain

import (
	"encoding/json"
	"errors"
	"time"
)

// SessionSettings is exactly what one session uses
// (docs/behaviour.md#configuration): the runtime's command, the bounds,
// the tool-server confirmation, the MCP servers to deliver, the MCP name
// reserved for the caller, and the SSH hosts the settings were written
// for. A WORKFLOW.md becomes one with Config.SessionSettings (package config
// loads the file); a library caller may fill one directly, starting from
// DefaultSessionSettings.
type SessionSettings struct {
	// Command is the runtime's command line split into words; Command[0]
	// names the program.
	Command []string
	// ReadTimeout bounds each start-up call but initialize, a turn's
	// acceptance, every write and the wait after a cancel; see
	// EffectiveReadTimeout.
	ReadTimeout time.Duration
	// TurnTimeout bounds a whole turn; zero or negative disables it.
	TurnTimeout time.Duration
	// StallTimeout is the longest a turn may go without an event; zero or
	// negative disables it.
	StallTimeout time.Duration
	// StopGrace is the time between SIGTERM and SIGKILL at teardown; it
	// must be positive.
	StopGrace time.Duration
	// ConfirmToolServers declares acpdrive's own beacon beside the MCP
	// servers and reports whether the runtime starts it
	// (docs/behaviour.md#tool-server-confirmation).
	ConfirmToolServers bool
	// ConfirmToolServersTimeout bounds the confirmation; see
	// EffectiveConfirmToolServersTimeout.
	ConfirmToolServersTimeout time.Duration
	// MCPConfigPath is the MCP configuration file (the mcpServers object of
	// the common mcp.json format) whose servers session/new and the
	// continuation calls declare; "" delivers none. A remote launch
	// delivers none and does not read it.
	MCPConfigPath string
	// ReservedMCPName is a server name the MCP configuration may not
	// declare, because the caller declares a server of that name itself;
	// "" reserves none (docs/behaviour.md#mcp).
	ReservedMCPName string
	// Hosts are the SSH hosts these settings were written for
	// (worker.ssh_hosts); empty means a local launch. A session whose
	// settings name hosts refuses a launcher that starts the runtime on
	// this machine.
	Hosts []string
	// VerificationBound bounds a credential-verification session; zero,
	// negative or more than MaxVerificationBound means MaxVerificationBound.
	VerificationBound time.Duration
	// Session is the session's own configuration: mode, model, options,
	// additional directories and system prompt, applied and verified before
	// the first prompt (docs/behaviour.md#session-configuration).
	Session SessionConfig
	// Subagents declares clientCapabilities.subagents in initialize: a
	// runtime that supports it runs each subagent as a child session,
	// whose events acpdrive reports under the child's id and its parent's
	// (docs/behaviour.md#sessions-as-resources-and-child-sessions).
	Subagents bool
	// FailureChannel declares the session failure extension the Claude
	// adapter 0.101.0 and codex-acp 2.6.0 offer (retry warnings, typed
	// failure records; docs/behaviour.md#failures). Off by default:
	// declaring it makes those runtimes treat acpdrive as a JetBrains AIR
	// client, which changes other reports of theirs (codex-acp's tool
	// calls, the Claude adapter's error messages). It is not declared
	// together with Subagents (the Claude adapter would switch to AIR's
	// subagent form).
	FailureChannel bool
	// Protocol is the ACP version the session asks for and accepts
	// (docs/behaviour.md#protocol-v2); "" is ProtocolV1.
	Protocol ProtocolChoice
	// InitTimeout bounds the initialize call when positive; zero (or
	// negative) keeps the default, see InitializeTimeout.
	InitTimeout time.Duration
	// Permissions is the permission policy the operator chose
	// (agent.permissions, --permissions): its zero value refuses every
	// request, the unattended posture (docs/behaviour.md#permission-posture).
	Permissions PermissionPolicy
	// Answers is the answers policy the operator chose (agent.answers,
	// --answers); nil offers no elicitation and a question ends the turn
	// turn_input_required (docs/behaviour.md#elicitation). Options.Answers,
	// when set, comes first.
	Answers *Answers
	// Sandbox confines the runtime and everything it spawns
	// (docs/behaviour.md#sandbox); the zero value runs it unconfined.
	Sandbox Sandbox
	// OutputSchema is the JSON Schema (draft 2020-12) of a turn's result
	// (agent.output_schema, --output-schema); nil asks for none. It must
	// compile and describe an object, or the start is refused
	// (docs/behaviour.md#structured-results). OutputSchemaTurns says
	// which turns ask for it.
	OutputSchema json.RawMessage
	// OutputRetries is how many follow-up prompts a turn that asked for
	// the result and ended without a valid one sends asking for it
	// (--output-retries); zero or negative: none
	// (docs/behaviour.md#structured-results).
	OutputRetries int
	// OutputSchemaTurns is which turns ask for the result
	// (agent.output_schema_turns, --output-schema-turns): ResultTurnsEach
	// (the default, also "") every Session.Turn; ResultTurnsLast only
	// Session.TurnWithResult, which a caller sends for its last prompt
	// (the CLI does), while Session.Turn sends the prompt as given and
	// reports no result. Any other value refuses the start
	// (CheckOutputSchemaTurnsInvalid).
	OutputSchemaTurns ResultTurns
}

// MaxVerificationBound is the longest a credential-verification session may
// take (docs/behaviour.md#credential-verification).
const MaxVerificationBound = 60 * time.Second

// DefaultSessionSettings returns the documented defaults. Command is left
// empty: it has no default and is required.
func DefaultSessionSettings() SessionSettings {
	return DefaultConfig().SessionSettings()
}

// SessionSettings is the part of a WORKFLOW.md configuration one session
// uses. What it leaves out (max_turns, max_tokens, backoff, concurrency,
// the SSH client settings) is the orchestrator's or the launcher's.
func (c Config) SessionSettings() SessionSettings {
	return SessionSettings{
		Command:                   append([]string(nil), c.Command...),
		ReadTimeout:               c.ReadTimeout,
		TurnTimeout:               c.TurnTimeout,
		StallTimeout:              c.StallTimeout,
		StopGrace:                 c.StopGrace,
		ConfirmToolServers:        c.ConfirmToolServers,
		ConfirmToolServersTimeout: c.ConfirmToolServersTimeout,
		MCPConfigPath:             c.MCPConfig,
		Hosts:                     append([]string(nil), c.SSHHosts...),
		Session:                   c.Session.clone(),
		Subagents:                 c.Subagents,
		Protocol:                  protocolOf(c.Protocol),
		Permissions:               c.Permissions.clone(),
		Answers:                   c.Answers,
		Sandbox:                   c.Sandbox.clone(),
		OutputRetries:             c.OutputRetries,
		OutputSchemaTurns:         ResultTurns(c.OutputSchemaTurns),
	}
}

// Remote reports whether the settings were written for an SSH launch.
func (s SessionSettings) Remote() bool { return len(s.Hosts) > 0 }

// EffectiveReadTimeout returns ReadTimeout, or 30 s when it is not positive.
func (s SessionSettings) EffectiveReadTimeout() time.Duration {
	if s.ReadTimeout <= 0 {
		return FallbackReadTimeout
	}
	return s.ReadTimeout
}

// InitializeTimeout returns the bound of the initialize call: InitTimeout
// when positive, otherwise max(EffectiveReadTimeout, 60 s).
func (s SessionSettings) InitializeTimeout() time.Duration {
	if s.InitTimeout > 0 {
		return s.InitTimeout
	}
	return max(s.EffectiveReadTimeout(), MinInitializeTimeout)
}

// EffectiveConfirmToolServersTimeout returns ConfirmToolServersTimeout,
// or DefaultConfirmToolServersTimeout when it is not positive.
func (s SessionSettings) EffectiveConfirmToolServersTimeout() time.Duration {
	if s.ConfirmToolServersTimeout <= 0 {
		return DefaultConfirmToolServersTimeout
	}
	return s.ConfirmToolServersTimeout
}

// EffectiveVerificationBound returns VerificationBound within
// (0, MaxVerificationBound], and MaxVerificationBound otherwise.
func (s SessionSettings) EffectiveVerificationBound() time.Duration {
	if s.VerificationBound <= 0 || s.VerificationBound > MaxVerificationBound {
		return MaxVerificationBound
	}
	return s.VerificationBound
}

// Validate returns the error findings that keep the settings from starting
// a session, in a fixed order; nil when there are none. It runs the same
// checks, with the same names and messages, as Config.Validate does for the
// fields both have. An empty command is not a finding here: start-up step 2
// reports it with its own message (docs/behaviour.md#start-up).
func (s SessionSettings) Validate() []Finding {
	var fs []Finding
	if s.StopGrace <= 0 {
		fs = append(fs, Finding{Severity: SeverityError, Check: CheckStopGraceNonPositive, Message: MsgStopGraceNonPositive})
	}
	if _, err := ParseProtocolChoice(string(s.Protocol)); err != nil {
		fs = append(fs, Finding{Severity: SeverityError, Check: CheckProtocolInvalid, Message: "agent." + err.Error()})
	}
	fs = append(fs, s.Permissions.Validate()...)
	fs = append(fs, s.Sandbox.Validate()...)
	fs = append(fs, s.Session.Validate()...)
	return append(fs, resultTurnsFindings(string(s.OutputSchemaTurns))...)
}

// ErrHostUnreachable marks a start that failed because the transport could
// not connect to its host at all (the ssh binary's exit status 255 before
// the handshake, a native dial that reached no server): a caller holding
// several hosts may try the next one (docs/behaviour.md#ssh). Test for it
// with errors.Is.
var ErrHostUnreachable = errors.New("host unreachable")

// ErrSteerQueued is wrapped by the error of a steer queued as the start of
// the next prompt because the runtime does not advertise steering
// (docs/behaviour.md#steering). It is not a failure.
var ErrSteerQueued = errors.New("the message was queued as the start of the next prompt")

// protocolOf is the choice a configuration names; one Validate refuses
// reads as the default.
func protocolOf(s string) ProtocolChoice {
	p, err := ParseProtocolChoice(s)
	if err != nil {
		return ProtocolDefault
	}
	return p
}
