package domain

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Outcome is how a turn ended. Its values are the outcome event types.
type Outcome string

// Turn outcomes.
const (
	// OutcomeCompleted: the turn ended normally.
	OutcomeCompleted Outcome = Outcome(EventTurnCompleted)
	// OutcomeFailed: the turn ended with a failure.
	OutcomeFailed Outcome = Outcome(EventTurnFailed)
	// OutcomeCancelled: this side cancelled the turn.
	OutcomeCancelled Outcome = Outcome(EventTurnCancelled)
	// OutcomeInputRequired: only a person could answer the agent.
	OutcomeInputRequired Outcome = Outcome(EventTurnInputRequired)
)

// Event returns the event type that reports this outcome.
func (o Outcome) Event() EventType { return EventType(o) }

// Event returns the event that closes the turn r ended
// (docs/behaviour.md#turn-disposition): its type is the outcome's event
// type, except turn_ended_with_error for a failure that did not come
// through a stop reason; its Outcome is always r.Outcome, so an event
// reader and a result reader use one vocabulary.
func (r TurnResult) Event() Event {
	typ := r.Outcome.Event()
	if r.Outcome == OutcomeFailed && r.StopReason == "" {
		typ = EventTurnEndedWithError
	}
	return Event{Type: typ, Message: r.Message(), Outcome: r.Outcome}
}

// Stop reasons a session/prompt response can carry.
const (
	// StopEndTurn: the agent finished the turn.
	StopEndTurn = "end_turn"
	// StopMaxTokens: the agent hit its token limit.
	StopMaxTokens = "max_tokens"
	// StopMaxTurnRequests: the agent hit its per-turn request limit.
	StopMaxTurnRequests = "max_turn_requests"
	// StopRefusal: the agent refused to continue.
	StopRefusal = "refusal"
	// StopCancelled: the turn was cancelled.
	StopCancelled = "cancelled"
)

// Messages for the stop reasons that fail a turn as a classification
// decision.
const (
	// MsgStopRefusal is the turn_refused message.
	MsgStopRefusal = "agent refused the prompt (stopReason refusal)"
	// MsgStopMaxTokens is the turn_token_limit message.
	MsgStopMaxTokens = "agent reached its token limit (stopReason max_tokens)"
	// MsgStopMaxTurnRequests is the turn_request_limit message.
	MsgStopMaxTurnRequests = "agent reached its request limit for the turn (stopReason max_turn_requests)"
)

// maxQuotedStopReason bounds, in runes, the unrecognized stopReason quoted
// in a turn_outcome_unknown message.
const maxQuotedStopReason = 200

// msgFailedWithoutError is the message FailedResult uses for a nil error.
const msgFailedWithoutError = "turn failed"

// TurnResult is a turn's disposition.
type TurnResult struct {
	// Outcome is how the turn ended.
	Outcome Outcome
	// StopReason is the stopReason the response carried, "" when none.
	StopReason string
	// Err describes a turn that did not complete; nil on OutcomeCompleted.
	Err *AgentError
	// Usage is the turn's measured token figures, nil when the turn was
	// not measured (never zero figures in its place).
	Usage *Usage
	// Model is the model the figures are attributed to.
	Model string
	// Source names what measured Usage (SourcePromptResult,
	// SourceStateUpdate, or a journal source's name); "" when unmeasured.
	Source string
	// Breakdown is the runtime's per-model figures for the turn, side
	// calls included, when it attaches them; never the turn's figure.
	Breakdown []ModelUsage
	// Cost is the turn's cost from the session's cumulative cost, nil
	// when the runtime reports none (docs/behaviour.md#token-accounting).
	Cost *Cost
	// Context is the context window's use at the turn's end, nil when the
	// runtime reports none.
	Context *ContextUsage
	// Reply is the turn's reply: the agent's last message of the turn
	// (its message_chunk texts since the last message boundary), whole up
	// to ReplyCap bytes; "" when the turn produced no message
	// (docs/behaviour.md#turn-disposition). A child session's text is
	// never part of it.
	Reply string
	// ReplyCut reports that Reply was cut at ReplyCap bytes.
	ReplyCut bool
	// CancelUnanswered reports that acpdrive sent session/cancel to end
	// the turn and the runtime did not answer the prompt within
	// read_timeout_ms afterwards (docs/behaviour.md#turn-disposition).
	CancelUnanswered bool
	// Failure is the class of a turn that did not complete, nil on
	// OutcomeCompleted (docs/behaviour.md#failures).
	Failure *Failure
	// Result is the turn's structured result, valid against
	// SessionSettings.OutputSchema; nil when no schema was set, the turn
	// did not ask for one (SessionSettings.OutputSchemaTurns) or none
	// arrived (docs/behaviour.md#structured-results).
	Result json.RawMessage
	// ResultSource is where Result came from: ResultSourceTool or
	// ResultSourceReply; "" without a Result.
	ResultSource string
	// ResultMissing says why a turn that asked for a result has none
	// (the last validation error, or that the reply held no JSON object);
	// "" when it has one, no schema was set or the turn did not ask. It
	// never changes Outcome.
	ResultMissing string
	// Question is the question the runtime asked when the turn ended
	// turn_input_required because it went unanswered, so that a person
	// can be asked and the session resumed; nil otherwise
	// (docs/behaviour.md#elicitation).
	Question *ElicitationInfo
}

// Retryable reports whether retrying the turn can help: the failure's
// class decides where there is one (quota, credentials and context
// overflow are not retryable), else the error kind
// (docs/behaviour.md#failures). A completed turn is not retryable.
func (r TurnResult) Retryable() bool {
	switch {
	case r.Failure != nil:
		return r.Failure.Retryable
	case r.Err != nil:
		return r.Err.Kind.Retryable()
	}
	return false
}

// ReplyCap bounds TurnResult.Reply, in bytes (1 MiB): a longer reply is
// cut at the last whole rune within the bound and ReplyCut is set.
const ReplyCap = 1 << 20

// Message returns the error's message, or "" when there is no error.
func (r TurnResult) Message() string {
	if r.Err == nil {
		return ""
	}
	return r.Err.Message
}

// Override records that this side decided to end the turn before the
// prompt response arrived; it wins over whatever stopReason follows.
type Override int

// Overrides.
const (
	// OverrideNone: the stopReason decides.
	OverrideNone Override = iota
	// OverrideCancel: the caller cancelled the turn.
	OverrideCancel
	// OverrideInputRequired: a request only a person can answer arrived.
	OverrideInputRequired
)

// Disposition decides how a turn ends from its stopReason and any override
// (docs/behaviour.md#turn-disposition). OverrideCancel yields turn_cancelled
// ("turn cancelled"); OverrideInputRequired yields turn_input_required with
// MsgInputRequired, followed by ": <detail>" when inputDetail is not blank.
// Otherwise the stopReason decides; an unknown Override value counts as
// OverrideNone. An unrecognized stopReason is quoted in the message, cut to
// 200 runes.
func Disposition(stopReason string, override Override, inputDetail string) TurnResult {
	r := TurnResult{StopReason: stopReason}
	switch override {
	case OverrideCancel:
		r.Outcome = OutcomeCancelled
		r.Err = NewError(KindTurnCancelled, MsgTurnCancelled)
		return r
	case OverrideInputRequired:
		msg := MsgInputRequired
		if d := strings.TrimSpace(inputDetail); d != "" {
			msg += ": " + d
		}
		r.Outcome = OutcomeInputRequired
		r.Err = NewError(KindTurnInputRequired, msg)
		return r
	}
	switch stopReason {
	case StopEndTurn:
		r.Outcome = OutcomeCompleted
		return r
	case StopRefusal:
		r.Err = NewError(KindTurnRefused, MsgStopRefusal)
	case StopMaxTokens:
		r.Err = NewError(KindTurnTokenLimit, MsgStopMaxTokens)
	case StopMaxTurnRequests:
		r.Err = NewError(KindTurnRequestLimit, MsgStopMaxTurnRequests)
	case StopCancelled:
		r.Err = NewError(KindTurnFailed, MsgUnaskedCancel)
	default:
		r.Err = NewError(KindTurnOutcomeUnknown,
			fmt.Sprintf("agent reported an unrecognized stop reason: %q",
				TruncateRunes(stopReason, maxQuotedStopReason)))
	}
	r.Outcome = OutcomeFailed
	return r
}

// FailedResult wraps an error that ended a turn before or instead of a
// stopReason. The outcome follows the kind: turn_cancelled is
// OutcomeCancelled, turn_input_required is OutcomeInputRequired, anything
// else OutcomeFailed. A nil err yields a turn_failed error "turn failed".
func FailedResult(err *AgentError) TurnResult {
	if err == nil {
		err = NewError(KindTurnFailed, msgFailedWithoutError)
	}
	r := TurnResult{Outcome: OutcomeFailed, Err: err}
	switch err.Kind {
	case KindTurnCancelled:
		r.Outcome = OutcomeCancelled
	case KindTurnInputRequired:
		r.Outcome = OutcomeInputRequired
	}
	return r
}

// Token ceiling messages (docs/behaviour.md#token-accounting).
const (
	// MsgTokenCeilingReached ends a run whose measured tokens reached
	// agent.max_tokens: no further prompt is sent.
	MsgTokenCeilingReached = "the run reached its token ceiling (agent.max_tokens); no further prompt was sent"
	// MsgNoTokenUsage closes a run with a ceiling whose runtime delivered
	// no figure.
	MsgNoTokenUsage = "run reported no token usage, token ceiling could not bound it"
)

// TokenBudget follows a run's measured tokens against a ceiling
// (agent.max_tokens; zero or negative: none). The zero value has no
// ceiling.
type TokenBudget struct {
	// Max is the ceiling in total tokens.
	Max int64
	// Used is the sum of the measured turns' figures.
	Used Usage
	// Measured counts the turns that carried figures.
	Measured int
}

// Add counts one turn's result.
func (b *TokenBudget) Add(res TurnResult) {
	if res.Usage == nil {
		return
	}
	b.Used = b.Used.Add(*res.Usage)
	b.Measured++
}

// Reached reports whether the measured total has reached the ceiling.
func (b TokenBudget) Reached() bool { return b.Max > 0 && b.Used.TotalTokens >= b.Max }

// Unbounded reports a ceiling that no figure could enforce.
func (b TokenBudget) Unbounded() bool { return b.Max > 0 && b.Measured == 0 }
