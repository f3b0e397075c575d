package ports

import "github.com/acpdrive/acpdrive/domain"

// AnswerPolicy answers the questions a runtime asks (elicitation/create)
// for the session's parent and children (docs/behaviour.md#elicitation).
// Setting one makes acpdrive offer the form mode of elicitation at
// initialize. It is asked on the session's reader, one question at a time,
// and must answer promptly: the runtime waits. An answer other than
// accept ends the turn turn_input_required with the question on its
// result. domain.Answers (an answers file) implements it.
type AnswerPolicy interface {
	// Answer answers one question: accept with the form's content, or
	// decline with the reason.
	Answer(q domain.ElicitationQuestion) domain.ElicitationAnswer
}

var _ AnswerPolicy = domain.Answers{}
