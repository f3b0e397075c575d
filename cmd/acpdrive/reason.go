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
	if r := reasonText(notFoundReason(err)); r != "" {
		return r + ": " + text
	}
	return text
}
