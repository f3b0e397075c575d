package domain

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// AgentKindACP is the agent kind this module implements.
const AgentKindACP = "agent-client-protocol"

// Accepted values of worker.ssh_strict_host_key_checking.
const (
	// StrictHostKeyAcceptNew accepts unknown host keys and refuses changed ones (the default).
	StrictHostKeyAcceptNew = "accept-new"
	// StrictHostKeyYes refuses unknown and changed host keys.
	StrictHostKeyYes = "yes"
	// StrictHostKeyNo accepts any host key.
	StrictHostKeyNo = "no"
)

// Configuration defaults (docs/behaviour.md#configuration).
const (
	// DefaultMaxTurns is the default agent.max_turns.
	DefaultMaxTurns = 20
	// DefaultTurnTimeout is the default agent.turn_timeout_ms.
	DefaultTurnTimeout = time.Hour
	// DefaultReadTimeout is the default agent.read_timeout_ms.
	DefaultReadTimeout = 5 * time.Second
	// FallbackReadTimeout replaces a non-positive agent.read_timeout_ms.
	FallbackReadTimeout = 30 * time.Second
	// MinInitializeTimeout is the least time initialize is given.
	MinInitializeTimeout = 60 * time.Second
	// DefaultStallTimeout is the default agent.stall_timeout_ms.
	DefaultStallTimeout = 5 * time.Minute
	// DefaultStopGrace is the default agent.stop_grace_ms.
	DefaultStopGrace = 5 * time.Second
	// DefaultMaxRetryBackoff is the default agent.max_retry_backoff_ms.
	DefaultMaxRetryBackoff = 5 * time.Minute
	// DefaultMaxConcurrentAgents is the default agent.max_concurrent_agents.
	DefaultMaxConcurrentAgents = 10
)

// Config is the adapter's configuration model (docs/behaviour.md#configuration).
type Config struct {
	// Kind is agent.kind; AgentKindACP for this adapter.
	Kind string
	// Command is agent.command split into words (see SplitHostCommandLine for
	// the string form).
	Command []string
	// URL is agent.url: the address of a runtime already listening
	// (docs/behaviour.md#network), instead of Command; "" launches Command.
	URL string
	// TokenEnv is agent.token_env: the environment variable holding the
	// bearer token for URL; "" sends none.
	TokenEnv string
	// MaxTurns is agent.max_turns.
	MaxTurns int
	// TurnTimeout is agent.turn_timeout_ms.
	TurnTimeout time.Duration
	// ReadTimeout is agent.read_timeout_ms; see EffectiveReadTimeout.
	ReadTimeout time.Duration
	// StallTimeout is agent.stall_timeout_ms; zero or negative disables it.
	StallTimeout time.Duration
	// StopGrace is agent.stop_grace_ms; it must be positive.
	StopGrace time.Duration
	// MaxRetryBackoff is agent.max_retry_backoff_ms.
	MaxRetryBackoff time.Duration
	// MaxRetries is agent.max_retries: how many times `acpdrive run`
	// sends a turn again after a retryable failure; zero or negative: none
	// (docs/behaviour.md#retrying).
	MaxRetries int
	// MaxConcurrentAgents is agent.max_concurrent_agents.
	MaxConcurrentAgents int
	// MaxTokens is agent.max_tokens, the orchestrator's per-issue token
	// ceiling; zero means unlimited. This kind only reads it to warn when
	// no usage can be reported against it (CheckNoUsageReporting).
	MaxTokens int64
	// MaxCost is agent.max_cost: the run stops before the next prompt
	// once its turns cost this much in the runtime's currency; zero means
	// unlimited (docs/behaviour.md#token-accounting).
	MaxCost float64
	// MaxContextFraction is agent.max_context_fraction: the run stops
	// before the next prompt once the context window's used/size reaches
	// it; zero means unlimited.
	MaxContextFraction float64
	// Subagents is agent.subagents: follow subagents as child sessions
	// (SessionSettings.Subagents).
	Subagents bool
	// Sandbox is agent.sandbox, agent.sandbox_net and
	// agent.sandbox_writable: the confinement of the runtime
	// (SessionSettings.Sandbox, docs/behaviour.md#sandbox).
	Sandbox Sandbox
	// OutputSchema is agent.output_schema: the file holding the JSON
	// Schema of each turn's result, "" when absent; resolved like
	// MCPConfig. The CLI reads it into SessionSettings.OutputSchema
	// (docs/behaviour.md#structured-results).
	OutputSchema string
	// OutputRetries is agent.output_retries: the follow-up prompts a turn
	// without a valid result sends (SessionSettings.OutputRetries).
	OutputRetries int
	// OutputSchemaTurns is agent.output_schema_turns as written: "each"
	// (the default, also ""), or "last"; Validate refuses any other value
	// (CheckOutputSchemaTurnsInvalid; SessionSettings.OutputSchemaTurns).
	OutputSchemaTurns string
	// MCPConfig is agent-client-protocol.mcp_config: the operator's MCP
	// server configuration file; "" when absent. The WORKFLOW.md loader
	// (package config) resolves a relative path against the WORKFLOW.md
	// directory, so a loaded configuration holds an absolute path.
	MCPConfig string
	// MCPConfigType names the YAML type agent-client-protocol.mcp_config
	// was written with when that type is not a string, as the loader found
	// it ("an integer", "a mapping", "a list", …); "" when mcp_config is
	// absent, null or a string. Validate refuses a non-empty value with
	// CheckMCPConfigWrongType.
	MCPConfigType string
	// Effort is agent-client-protocol.effort as written ("" when absent or
	// null). This kind passes no reasoning level to its runtime, so any
	// non-empty value draws CheckEffortNotForwarded and is otherwise unused.
	Effort string
	// ConfirmToolServers is agent-client-protocol.confirm_tool_servers:
	// declare acpdrive's own beacon beside the session's MCP servers and
	// lower "tool servers" when the runtime does not start it
	// (docs/behaviour.md#tool-server-confirmation).
	ConfirmToolServers bool
	// ConfirmToolServersTimeout is
	// agent-client-protocol.confirm_tool_servers_timeout_ms, the bound of
	// the confirmation; see EffectiveConfirmToolServersTimeout.
	ConfirmToolServersTimeout time.Duration
	// Protocol is agent.protocol, the ACP version to ask for: "1" (the
	// default, also for ""), "2" or "auto" (docs/behaviour.md#protocol-v2).
	Protocol string
	// TokenRatesPriced reports whether the front matter's token_rates block
	// prices this agent kind (has an entry keyed "agent-client-protocol").
	TokenRatesPriced bool
	// SSHHosts is worker.ssh_hosts; empty means a local launch.
	SSHHosts []string
	// SSHStrictHostKeyChecking is worker.ssh_strict_host_key_checking.
	SSHStrictHostKeyChecking string
	// SSHPassEnv is worker.ssh_pass_env: names of variables to forward.
	SSHPassEnv []string
	// SSHConfig is worker.ssh_config: an alternate ssh client config (-F).
	SSHConfig string
	// Permissions is agent.permissions: the permission policy
	// (docs/behaviour.md#permission-posture). The WORKFLOW.md loader reads
	// a rules file and reports its faults with their lines.
	Permissions PermissionPolicy
	// Answers is agent.answers: the answers policy read from its file
	// (docs/behaviour.md#elicitation); nil offers no elicitation.
	Answers *Answers
	// Session is agent.mode, agent.model, agent.config_options,
	// agent.additional_directories, agent.system_prompt and
	// agent.system_prompt_mode (docs/behaviour.md#session-configuration).
	Session SessionConfig
}

// DefaultConfig returns the configuration defaults. Command is left empty:
// it has no default and is required.
func DefaultConfig() Config {
	return Config{
		Kind:                     AgentKindACP,
		MaxTurns:                 DefaultMaxTurns,
		TurnTimeout:              DefaultTurnTimeout,
		ReadTimeout:              DefaultReadTimeout,
		StallTimeout:             DefaultStallTimeout,
		StopGrace:                DefaultStopGrace,
		MaxRetryBackoff:          DefaultMaxRetryBackoff,
		MaxConcurrentAgents:      DefaultMaxConcurrentAgents,
		SSHStrictHostKeyChecking: StrictHostKeyAcceptNew,
	}
}

// EffectiveReadTimeout returns ReadTimeout, or 30 s when it is not positive.
func (c Config) EffectiveReadTimeout() time.Duration {
	return SessionSettings{ReadTimeout: c.ReadTimeout}.EffectiveReadTimeout()
}

// EffectiveConfirmToolServersTimeout returns ConfirmToolServersTimeout,
// or DefaultConfirmToolServersTimeout when it is not positive.
func (c Config) EffectiveConfirmToolServersTimeout() time.Duration {
	return SessionSettings{ConfirmToolServersTimeout: c.ConfirmToolServersTimeout}.EffectiveConfirmToolServersTimeout()
}

// InitializeTimeout returns the bound of the initialize call:
// max(EffectiveReadTimeout, 60 s).
func (c Config) InitializeTimeout() time.Duration {
	return SessionSettings{ReadTimeout: c.ReadTimeout}.InitializeTimeout()
}

// EffectiveSSHStrictHostKeyChecking returns SSHStrictHostKeyChecking when
// it is one of accept-new, yes, no, and accept-new otherwise.
func (c Config) EffectiveSSHStrictHostKeyChecking() string {
	if validStrictHostKey(c.SSHStrictHostKeyChecking) {
		return c.SSHStrictHostKeyChecking
	}
	return StrictHostKeyAcceptNew
}

// Remote reports whether the configuration launches over SSH.
func (c Config) Remote() bool { return len(c.SSHHosts) > 0 }

func validStrictHostKey(v string) bool {
	switch v {
	case StrictHostKeyAcceptNew, StrictHostKeyYes, StrictHostKeyNo:
		return true
	}
	return false
}

// Severity grades a validation finding.
type Severity string

// Finding severities.
const (
	// SeverityError refuses the configuration.
	SeverityError Severity = "error"
	// SeverityWarning is reported and the configuration is used.
	SeverityWarning Severity = "warning"
)

// Finding is one validation result.
type Finding struct {
	// Severity grades the finding.
	Severity Severity
	// Check is the stable check name operators grep for.
	Check string
	// Message is the user-visible explanation.
	Message string
}

// Validation check names. They are contract strings operators grep for.
const (
	// CheckKindUnsupported: agent.kind names a kind other than
	// agent-client-protocol.
	CheckKindUnsupported = "agent.kind.unsupported"
	// CheckURLWithCommand: agent.url is set together with agent.command
	// (or worker.ssh_hosts).
	CheckURLWithCommand = "agent.url.exclusive"
	// CheckCommandRequired: agent.command is missing.
	CheckCommandRequired = "agent.command.required"
	// CheckStopGraceNonPositive: agent.stop_grace_ms is not positive.
	CheckStopGraceNonPositive = "agent.stop_grace_ms.non_positive"
	// CheckSSHStrictHostKeyInvalid: worker.ssh_strict_host_key_checking has
	// a value other than accept-new, yes, no.
	CheckSSHStrictHostKeyInvalid = "worker.ssh_strict_host_key_checking.invalid"
	// CheckMCPConfigWrongType: agent-client-protocol.mcp_config is present
	// with a YAML type other than a string.
	CheckMCPConfigWrongType = "agent-client-protocol.mcp_config.wrong_type"
	// CheckOutputSchemaInvalid: agent.output_schema cannot be read, does
	// not compile or does not describe an object
	// (docs/behaviour.md#structured-results); `acpdrive validate` reports
	// it, Start refuses it (agent_not_found).
	CheckOutputSchemaInvalid = "agent.output_schema.invalid"
	// CheckEffortNotForwarded: agent-client-protocol.effort is set; this
	// kind passes no reasoning level to its runtime.
	CheckEffortNotForwarded = "agent.effort.not_forwarded"
	// CheckNoUsageReporting: an SSH launch reports no token usage, yet
	// agent.max_tokens is set.
	CheckNoUsageReporting = "agent.kind.no_usage_reporting"
	// CheckNoCostEstimate: an SSH launch reports no token usage, yet
	// token_rates prices this kind.
	CheckNoCostEstimate = "agent.kind.no_cost_estimate"
)

// Validation messages.
const (
	// MsgURLWithCommand is the CheckURLWithCommand message.
	MsgURLWithCommand = "agent.url and agent.command are exclusive: a runtime at a URL is not launched (docs/behaviour.md#network)"
	// MsgURLWithSSH is the CheckURLWithCommand message when SSH hosts
	// are named.
	MsgURLWithSSH = "agent.url and worker.ssh_hosts are exclusive: a runtime at a URL is not launched (docs/behaviour.md#network)"
	// MsgCommandRequired is the CheckCommandRequired message.
	MsgCommandRequired = `agent.command is required for agent kind "agent-client-protocol"`
	// MsgStopGraceNonPositive is the CheckStopGraceNonPositive message.
	MsgStopGraceNonPositive = "agent.stop_grace_ms must be positive"
	// MsgEffortNotForwarded is the CheckEffortNotForwarded message.
	MsgEffortNotForwarded = `agent-client-protocol.effort has no effect: agent kind "agent-client-protocol" passes no reasoning level to its agent; where the agent takes a reasoning option on its command line, write it in agent.command`
	// MsgNoUsageReporting is the CheckNoUsageReporting message.
	MsgNoUsageReporting = `agent.max_tokens is set but agent kind "agent-client-protocol" has no journal source for the sessions this configuration produces (SSH): only a runtime that reports usage in its prompt results can be measured, and for any other the per-issue token ceiling can never be reached`
	// MsgNoCostEstimate is the CheckNoCostEstimate message.
	MsgNoCostEstimate = `token_rates prices agent kind "agent-client-protocol", which reports no token usage for the sessions this configuration produces: no cost can be estimated for it`
)

// KindUnsupportedMessage is the CheckKindUnsupported message for kind.
func KindUnsupportedMessage(kind string) string {
	return fmt.Sprintf("agent.kind %q is not supported: acpdrive implements agent kind %q only", kind, AgentKindACP)
}

// MCPConfigWrongTypeMessage is the CheckMCPConfigWrongType message for a
// mcp_config written as found (for example "a mapping"). Building a
// session from such a configuration refuses it with this same text.
func MCPConfigWrongTypeMessage(found string) string {
	return "agent-client-protocol.mcp_config: expected a string (a file path), found " + found
}

// Validate runs every configuration check of docs/behaviour.md#validation and
// returns the findings, errors and warnings alike, in a fixed order; nil
// when there are none. The same function runs at validate time
// (acpdrive validate), when a session is built, and on every reload, so
// the verdict and its messages are identical in all three places; the
// WORKFLOW.md loader (package config) records on the Config the YAML facts
// the checks need (MCPConfigType, Effort, TokenRatesPriced) and calls it.
//
// The order is: agent.kind.unsupported, agent.command.required,
// agent.stop_grace_ms.non_positive,
// agent-client-protocol.mcp_config.wrong_type (errors), then
// worker.ssh_strict_host_key_checking.invalid, agent.effort.not_forwarded,
// agent.kind.no_usage_reporting, agent.kind.no_cost_estimate (warnings),
// then the sandbox's errors (Sandbox.Validate), the session
// configuration's (SessionConfig.Validate) and
// agent.output_schema_turns.invalid.
//
// An empty Kind counts as agent-client-protocol. An agent.command is
// missing when it has no word or only blank words. An empty
// worker.ssh_strict_host_key_checking counts as unset. agent.max_tokens is
// set when it is positive. The two usage warnings apply to an SSH launch
// only: a local launch may be measured, a remote one never is.
func (c Config) Validate() []Finding {
	var fs []Finding
	if c.Kind != "" && c.Kind != AgentKindACP {
		fs = append(fs, Finding{Severity: SeverityError, Check: CheckKindUnsupported, Message: KindUnsupportedMessage(c.Kind)})
	}
	switch {
	case c.URL != "" && hasCommand(c.Command):
		fs = append(fs, Finding{Severity: SeverityError, Check: CheckURLWithCommand, Message: MsgURLWithCommand})
	case c.URL != "" && len(c.SSHHosts) > 0:
		fs = append(fs, Finding{Severity: SeverityError, Check: CheckURLWithCommand, Message: MsgURLWithSSH})
	case c.URL == "" && !hasCommand(c.Command):
		fs = append(fs, Finding{Severity: SeverityError, Check: CheckCommandRequired, Message: MsgCommandRequired})
	}
	if c.StopGrace <= 0 {
		fs = append(fs, Finding{Severity: SeverityError, Check: CheckStopGraceNonPositive, Message: MsgStopGraceNonPositive})
	}
	if _, err := ParseProtocolChoice(c.Protocol); err != nil {
		fs = append(fs, Finding{Severity: SeverityError, Check: CheckProtocolInvalid, Message: "agent." + err.Error()})
	}
	if c.MCPConfigType != "" {
		fs = append(fs, Finding{Severity: SeverityError, Check: CheckMCPConfigWrongType,
			Message: MCPConfigWrongTypeMessage(c.MCPConfigType)})
	}
	if v := c.SSHStrictHostKeyChecking; v != "" && !validStrictHostKey(v) {
		fs = append(fs, Finding{
			Severity: SeverityWarning,
			Check:    CheckSSHStrictHostKeyInvalid,
			Message: fmt.Sprintf("worker.ssh_strict_host_key_checking %q is not one of accept-new, yes, no; using %s",
				v, StrictHostKeyAcceptNew),
		})
	}
	if c.Effort != "" {
		fs = append(fs, Finding{Severity: SeverityWarning, Check: CheckEffortNotForwarded, Message: MsgEffortNotForwarded})
	}
	if c.Remote() && c.MaxTokens > 0 {
		fs = append(fs, Finding{Severity: SeverityWarning, Check: CheckNoUsageReporting, Message: MsgNoUsageReporting})
	}
	if c.Remote() && c.TokenRatesPriced {
		fs = append(fs, Finding{Severity: SeverityWarning, Check: CheckNoCostEstimate, Message: MsgNoCostEstimate})
	}
	fs = append(fs, c.Sandbox.Validate()...)
	fs = append(fs, c.Session.Validate()...)
	return append(fs, resultTurnsFindings(c.OutputSchemaTurns)...)
}

// FindingsError returns the messages of the error findings among fs, in order,
// joined into one error; nil when there is none. Callers that refuse a
// configuration (building a session, a reload) report exactly these texts.
func FindingsError(fs []Finding) error {
	var msgs []string
	for _, f := range fs {
		if f.Severity == SeverityError {
			msgs = append(msgs, f.Message)
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return errors.New(strings.Join(msgs, "\n"))
}

// HasErrors reports whether any finding has SeverityError.
func HasErrors(fs []Finding) bool {
	for _, f := range fs {
		if f.Severity == SeverityError {
			return true
		}
	}
	return false
}

func hasCommand(words []string) bool {
	for _, w := range words {
		if strings.TrimSpace(w) != "" {
			return true
		}
	}
	return false
}
