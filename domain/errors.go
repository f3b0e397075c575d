package domain

import (
	"errors"
	"math"
	"time"
)

// ErrorKind classifies an agent failure. Its values are contract strings
// that operators grep logs for; they never change.
//
// ErrorKind implements error so that errors.Is(err, KindX) reports whether
// err carries that kind (see AgentError.Is).
type ErrorKind string

// Error kinds, per docs/behaviour.md#errors.
const (
	// KindAgentNotFound: the command or executable could not be located
	// (also an empty command or a missing local ssh).
	KindAgentNotFound ErrorKind = "agent_not_found"
	// KindInvalidWorkspaceCWD: the workspace path is empty, relative,
	// missing, or not a directory.
	KindInvalidWorkspaceCWD ErrorKind = "invalid_workspace_cwd"
	// KindResponseTimeout: a bounded request/response wait elapsed.
	KindResponseTimeout ErrorKind = "response_timeout"
	// KindTurnTimeout: the whole turn exceeded turn_timeout_ms.
	KindTurnTimeout ErrorKind = "turn_timeout"
	// KindPortExit: the subprocess exited, the stream ended, or a write failed.
	KindPortExit ErrorKind = "port_exit"
	// KindResponseError: the agent answered with a JSON-RPC error, or a
	// second turn was started while one is active.
	KindResponseError ErrorKind = "response_error"
	// KindTurnFailed: the turn ended with a failure status.
	KindTurnFailed ErrorKind = "turn_failed"
	// KindTurnCancelled: the turn was cancelled by this side.
	KindTurnCancelled ErrorKind = "turn_cancelled"
	// KindTurnInputRequired: the agent asked for a decision only a person
	// can make.
	KindTurnInputRequired ErrorKind = "turn_input_required"
	// KindTurnRefused: stopReason refusal.
	KindTurnRefused ErrorKind = "turn_refused"
	// KindTurnTokenLimit: stopReason max_tokens.
	KindTurnTokenLimit ErrorKind = "turn_token_limit"
	// KindTurnRequestLimit: stopReason max_turn_requests.
	KindTurnRequestLimit ErrorKind = "turn_request_limit"
	// KindTurnOutcomeUnknown: an outcome this client cannot interpret.
	KindTurnOutcomeUnknown ErrorKind = "turn_outcome_unknown"
	// KindCredentialUnverified: the credential-verification session was
	// refused, not answered, or otherwise not completed.
	KindCredentialUnverified ErrorKind = "credential_unverified"
)

// Contract messages carried by AgentError values across the code base.
const (
	// MsgEmptyWorkspace is the message for an empty workspace path.
	MsgEmptyWorkspace = "empty workspace path"
	// MsgWorkspaceMissing is the message for a workspace path that does not exist.
	MsgWorkspaceMissing = "workspace path does not exist"
	// MsgWorkspaceNotDir is the message for a workspace path that is not a directory.
	MsgWorkspaceNotDir = "workspace path is not a directory"
	// MsgEmptyCommand is the message for an empty or blank agent command.
	MsgEmptyCommand = "agent command is empty or whitespace-only"
	// MsgConnEndedBeforeResponding is the message for a connection that
	// ended during start-up while the process is still alive.
	MsgConnEndedBeforeResponding = "agent connection ended before responding"
	// MsgTimedOut is the message for a start-up call or acceptance wait
	// that timed out.
	MsgTimedOut = "timed out waiting for a response"
	// MsgTurnInFlight is the message for a second turn started while one
	// is active.
	MsgTurnInFlight = "a turn is already in flight for this session"
	// MsgSteerNoTurn is the message of a steer sent while no turn runs
	// (docs/behaviour.md#steering).
	MsgSteerNoTurn = "no turn is running to steer; send the message as the next prompt"
	// MsgSteerNotOffered is the message of a steer to a runtime that does
	// not advertise steering (docs/behaviour.md#steering).
	MsgSteerNotOffered = "the runtime does not advertise _meta.steering.supported; _session/steering was not sent"
	// MsgConnEndedBeforeResult is the message for a connection lost during
	// a turn.
	MsgConnEndedBeforeResult = "the agent's connection ended before a response arrived"
	// MsgOutputNotCollected is the message for a turn ended by the
	// five-second drain bound after the runtime exited.
	MsgOutputNotCollected = "the agent runtime exited before the session finished collecting its output"
	// MsgPromptSendFailed is the message for a prompt write that failed
	// without the stream ending within read_timeout_ms.
	MsgPromptSendFailed = "failed to send the prompt to the agent"
	// MsgLineTooLong is the message for a line over the connection's bound.
	MsgLineTooLong = "a line from the agent exceeded the connection's line bound"
	// MsgPromptUndecodable is the message for an undecodable prompt response.
	MsgPromptUndecodable = "the agent's response to the prompt did not decode"
	// MsgUnaskedCancel is the message for a cancelled stopReason that
	// nobody asked for.
	MsgUnaskedCancel = "agent reported a cancelled stop reason without a cancellation on either side"
	// MsgTurnCancelled is the message for a turn this side cancelled.
	MsgTurnCancelled = "turn cancelled"
	// MsgSessionStopped is the turn_cancelled message of a Turn called
	// after the session's Stop: nothing is sent, and retrying on the same
	// session cannot help.
	MsgSessionStopped = "the session was stopped; a stopped session takes no further turn"
	// MsgCallerDeadline is the turn_timeout message of a turn ended by the
	// deadline of the caller's own context (not turn_timeout_ms).
	MsgCallerDeadline = "the caller's context deadline passed before the turn ended"
	// MsgInputRequired is the message (optionally followed by ": <detail>")
	// for a turn ended because only a person could answer.
	MsgInputRequired = "agent asked for a decision only a person can make"
)

// Error returns the kind's contract string.
func (k ErrorKind) Error() string { return string(k) }

// Retryable reports whether a failure of this kind should be retried with
// exponential backoff (docs/behaviour.md#errors). A non-retryable kind releases
// the claim instead. Unknown kinds are not retryable.
func (k ErrorKind) Retryable() bool {
	switch k {
	case KindResponseTimeout, KindTurnTimeout, KindPortExit, KindResponseError,
		KindTurnFailed, KindTurnRequestLimit, KindCredentialUnverified:
		return true
	default:
		return false
	}
}

// AgentError is an agent failure: a kind, a human-readable message and an
// optional cause.
type AgentError struct {
	// Kind classifies the failure.
	Kind ErrorKind
	// Message is the user-visible text.
	Message string
	// Cause is the underlying error, if any.
	Cause error
	// Reason says, for an agent_not_found error, which of its meanings it
	// has (docs/behaviour.md#error-kinds); "" for other kinds.
	Reason Reason
}

// Reason tells the meanings of agent_not_found apart: the kind covers "the
// program is not there" as well as "the runtime does not offer this"
// (docs/behaviour.md#error-kinds).
type Reason string

// The reasons of an agent_not_found error.
const (
	// ReasonProgramMissing: the runtime's program (or the ssh binary) is
	// not there or cannot be run.
	ReasonProgramMissing Reason = "program_missing"
	// ReasonNotOffered: the runtime was found and answered, but does not
	// offer what was asked (a mode, a session capability, a cancel).
	ReasonNotOffered Reason = "not_offered"
	// ReasonProtocolUnsupported: the runtime answered another ACP version.
	ReasonProtocolUnsupported Reason = "protocol_unsupported"
	// ReasonConfigurationInvalid: the settings themselves are refused.
	ReasonConfigurationInvalid Reason = "configuration_invalid"
)

// WithReason sets e's reason and returns e.
func (e *AgentError) WithReason(r Reason) *AgentError {
	e.Reason = r
	return e
}

// ReasonOf is the reason of the first *AgentError in err's chain; an
// agent_not_found error without one reads configuration_invalid, any other
// error "".
func ReasonOf(err error) Reason {
	var ae *AgentError
	if !errors.As(err, &ae) {
		return ""
	}
	if ae.Reason == "" && ae.Kind == KindAgentNotFound {
		return ReasonConfigurationInvalid
	}
	return ae.Reason
}

// NewError returns an AgentError without a cause.
func NewError(kind ErrorKind, msg string) *AgentError {
	return &AgentError{Kind: kind, Message: msg}
}

// WrapError returns an AgentError wrapping cause.
func WrapError(kind ErrorKind, msg string, cause error) *AgentError {
	return &AgentError{Kind: kind, Message: msg, Cause: cause}
}

// Error returns "agent: <kind>: <message>[: <cause>]". The cause is left
// out when it is nil or its text equals the message; an empty message is
// left out together with its separator. A nil receiver reads "agent: <nil>".
func (e *AgentError) Error() string {
	if e == nil {
		return "agent: <nil>"
	}
	s := "agent: " + string(e.Kind)
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Cause != nil {
		if c := e.Cause.Error(); c != e.Message {
			s += ": " + c
		}
	}
	return s
}

// Unwrap returns the cause (nil for a nil receiver).
func (e *AgentError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Cause
}

// Is reports whether target is this error's kind, so that
// errors.Is(err, KindPortExit) works through any wrapping.
func (e *AgentError) Is(target error) bool {
	if e == nil {
		return false
	}
	k, ok := target.(ErrorKind)
	return ok && k == e.Kind
}

// KindOf returns the kind of the first AgentError in err's chain (or, failing
// that, of a bare ErrorKind in the chain).
func KindOf(err error) (ErrorKind, bool) {
	var ae *AgentError
	if errors.As(err, &ae) && ae != nil {
		return ae.Kind, true
	}
	var k ErrorKind
	if errors.As(err, &k) {
		return k, true
	}
	return "", false
}

// retryBackoffBase is the first retry delay.
const retryBackoffBase = 10 * time.Second

// RetryBackoff returns the delay before retry number attempt (1-based):
// min(10s * 2^(attempt-1), maxDelay). An attempt below 1 counts as 1. A
// non-positive maxDelay leaves the delay uncapped; the delay saturates
// instead of overflowing.
func RetryBackoff(attempt int, maxDelay time.Duration) time.Duration {
	if attempt < 1 {
		attempt = 1
	}
	d := retryBackoffBase
	for i := 1; i < attempt; i++ {
		if d > math.MaxInt64/2 {
			d = math.MaxInt64
			break
		}
		d *= 2
		if maxDelay > 0 && d >= maxDelay {
			break
		}
	}
	if maxDelay > 0 && d > maxDelay {
		return maxDelay
	}
	return d
}

// Messages added for the bounds and start-up checks of docs/behaviour.md.
const (
	// MsgWorkspaceNotUTF8 is the message for a workspace path that is not
	// valid UTF-8 (ACP carries paths as JSON strings).
	MsgWorkspaceNotUTF8 = "workspace path is not valid UTF-8"
	// MsgWriteFailed is the message for a write to the runtime that did
	// not complete within read_timeout_ms while a turn was active.
	MsgWriteFailed = "a write to the agent runtime did not complete within read_timeout_ms"
	// MsgPromptAmbiguous is the message for a prompt answer carrying both
	// a result and an error.
	MsgPromptAmbiguous = "the agent's response to the prompt carried both a result and an error"
	// MsgMCPParsePrefix starts the message of an MCP configuration that
	// cannot be used.
	MsgMCPParsePrefix = "parse MCP config: "
)
