package domain

import (
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

// Configuration defaults (reference-tables §10).
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

// Config is the adapter's configuration model (reference-tables §10).
type Config struct {
	// Kind is agent.kind; AgentKindACP for this adapter.
	Kind string
	// Command is agent.command split into words (see SplitCommandLine for
	// the string form).
	Command []string
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
	// MaxConcurrentAgents is agent.max_concurrent_agents.
	MaxConcurrentAgents int
	// MCPConfig is agent-client-protocol.mcp_config, a path relative to the
	// WORKFLOW.md directory; "" when absent.
	MCPConfig string
	// SSHHosts is worker.ssh_hosts; empty means a local launch.
	SSHHosts []string
	// SSHStrictHostKeyChecking is worker.ssh_strict_host_key_checking.
	SSHStrictHostKeyChecking string
	// SSHPassEnv is worker.ssh_pass_env: names of variables to forward.
	SSHPassEnv []string
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
	if c.ReadTimeout <= 0 {
		return FallbackReadTimeout
	}
	return c.ReadTimeout
}

// InitializeTimeout returns the bound of the initialize call:
// max(EffectiveReadTimeout, 60 s).
func (c Config) InitializeTimeout() time.Duration {
	return max(c.EffectiveReadTimeout(), MinInitializeTimeout)
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

// Validation check names.
const (
	// CheckCommandRequired: agent.command is missing.
	CheckCommandRequired = "agent.command.required"
	// CheckStopGraceNonPositive: agent.stop_grace_ms is not positive.
	CheckStopGraceNonPositive = "agent.stop_grace_ms.non_positive"
	// CheckSSHStrictHostKeyInvalid: worker.ssh_strict_host_key_checking has
	// a value other than accept-new, yes, no.
	CheckSSHStrictHostKeyInvalid = "worker.ssh_strict_host_key_checking.invalid"
)

// Validation messages.
const (
	// MsgCommandRequired is the CheckCommandRequired message.
	MsgCommandRequired = `agent.command is required for agent kind "agent-client-protocol"`
	// MsgStopGraceNonPositive is the CheckStopGraceNonPositive message.
	MsgStopGraceNonPositive = "agent.stop_grace_ms must be positive"
)

// Validate runs every configuration check and returns the findings, errors
// and warnings alike, in a fixed order; nil when there are none. The same
// function runs at validate time, at start-up and on every reload.
//
// An agent.command is missing when it has no word or only blank words. An
// empty worker.ssh_strict_host_key_checking counts as unset.
func (c Config) Validate() []Finding {
	var fs []Finding
	if !hasCommand(c.Command) {
		fs = append(fs, Finding{Severity: SeverityError, Check: CheckCommandRequired, Message: MsgCommandRequired})
	}
	if c.StopGrace <= 0 {
		fs = append(fs, Finding{Severity: SeverityError, Check: CheckStopGraceNonPositive, Message: MsgStopGraceNonPositive})
	}
	if v := c.SSHStrictHostKeyChecking; v != "" && !validStrictHostKey(v) {
		fs = append(fs, Finding{
			Severity: SeverityWarning,
			Check:    CheckSSHStrictHostKeyInvalid,
			Message: fmt.Sprintf("worker.ssh_strict_host_key_checking %q is not one of accept-new, yes, no; using %s",
				v, StrictHostKeyAcceptNew),
		})
	}
	return fs
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
