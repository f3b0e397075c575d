package main

import (
	"errors"

	"github.com/acpdrive/acpdrive/domain"
)

// notFoundReason is the reason of an agent_not_found error, "" for any
// other error: the library says which of the kind's meanings it has
// (docs/behaviour.md#error-kinds).
func notFoundReason(err error) domain.Reason {
	var ae *domain.AgentError
	if !errors.As(err, &ae) || ae.Kind != domain.KindAgentNotFound {
		return ""
	}
	return domain.ReasonOf(err)
}

// startReason is the reason a failed start carries: an agent_not_found
// error's own, and configuration_invalid for invalid_workspace_cwd (the
// workspace the person named is not there or not a directory).
func startReason(err error) domain.Reason {
	if r := notFoundReason(err); r != "" {
		return r
	}
	if k, ok := domain.KindOf(err); ok && k == domain.KindInvalidWorkspaceCWD {
		return domain.ReasonConfigurationInvalid
	}
	return ""
}

// startExit is the exit status of a run whose session did not start: a
// mistake in what the person typed (configuration_invalid) is a usage or
// configuration error, exit 2; anything else exit 3 (docs/behaviour.md#cli).
func startExit(err error) int {
	if startReason(err) == domain.ReasonConfigurationInvalid {
		return exitUsage
	}
	return exitNoSession
}

// configInvalid makes err a configuration error of the start
// (agent_not_found, reason configuration_invalid).
func configInvalid(err error) error {
	return domain.WrapError(domain.KindAgentNotFound, err.Error(), err).WithReason(domain.ReasonConfigurationInvalid)
}

// reasonText says a reason for a person, before the error itself; "" when
// the error's own words say it (a missing program).
func reasonText(reason domain.Reason) string {
	switch reason {
	case domain.ReasonNotOffered:
		return "the runtime was found and answered, but does not offer what was asked"
	case domain.ReasonProtocolUnsupported:
		return "the runtime was found and answered, but speaks another ACP version"
	case domain.ReasonConfigurationInvalid:
		return "the configuration is invalid"
	}
	return ""
}

// withReason prefixes a person's error line with its reason's words.
func withReason(err error, text string) string {
	if r := reasonText(startReason(err)); r != "" {
		return r + ": " + text
	}
	return text
}
