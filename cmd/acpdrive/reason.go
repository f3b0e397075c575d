package main

import (
	"errors"
	"strings"

	"github.com/acpdrive/acpdrive/domain"
)

// Reasons of an agent_not_found error: the kind covers both "the program
// is not there" and "the runtime does not offer this"
// (docs/behaviour.md#error-kinds); the CLI says which.
const (
	reasonProgramMissing      = "program_missing"
	reasonNotOffered          = "not_offered"
	reasonProtocolUnsupported = "protocol_unsupported"
	reasonConfigInvalid       = "configuration_invalid"
)

// notFoundReason is the reason of an agent_not_found error, "" for any
// other error.
func notFoundReason(err error) string {
	var ae *domain.AgentError
	if !errors.As(err, &ae) || ae.Kind != domain.KindAgentNotFound {
		return ""
	}
	m := ae.Message
	switch {
	case strings.HasPrefix(m, "agent command "), m == "ssh binary not found on orchestrator host", m == "no SSH host configured":
		return reasonProgramMissing
	case strings.HasPrefix(m, "session configuration refused:"), strings.HasPrefix(m, "the runtime does not "):
		return reasonNotOffered
	case strings.Contains(m, "protocol version"):
		return reasonProtocolUnsupported
	}
	return reasonConfigInvalid
}

// reasonText says a reason for a person, before the error itself; "" when
// the error's own words say it (a missing program).
func reasonText(reason string) string {
	switch reason {
	case reasonNotOffered:
		return "the runtime was found and answered, but does not offer what was asked"
	case reasonProtocolUnsupported:
		return "the runtime was found and answered, but speaks another ACP version"
	case reasonConfigInvalid:
		return "the configuration is invalid"
	}
	return ""
}

// withReason prefixes a person's error line with its reason's words.
func withReason(err error, text string) string {
	if r := reasonText(notFoundReason(err)); r != "" {
		return r + ": " + text
	}
	return text
}
