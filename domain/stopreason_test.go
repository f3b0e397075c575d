package domain_test

import (
	"strings"
	"testing"

	"github.com/acpdrive/acpdrive/domain"
)

func TestDisposition(t *testing.T) {
	tests := []struct {
		name        string
		stopReason  string
		override    domain.Override
		detail      string
		wantOutcome domain.Outcome
		wantEvent   domain.EventType
		wantKind    domain.ErrorKind // "" = no error
		wantMsg     string
	}{
		{"end_turn", "end_turn", domain.OverrideNone, "", domain.OutcomeCompleted, domain.EventTurnCompleted, "", ""},
		{"refusal", "refusal", domain.OverrideNone, "", domain.OutcomeFailed, domain.EventTurnFailed,
			domain.KindTurnRefused, "agent refused the prompt (stopReason refusal)"},
		{"max_tokens", "max_tokens", domain.OverrideNone, "", domain.OutcomeFailed, domain.EventTurnFailed,
			domain.KindTurnTokenLimit, "agent reached its token limit (stopReason max_tokens)"},
		{"max_turn_requests", "max_turn_requests", domain.OverrideNone, "", domain.OutcomeFailed, domain.EventTurnFailed,
			domain.KindTurnRequestLimit, "agent reached its request limit for the turn (stopReason max_turn_requests)"},
		{"cancelled unasked", "cancelled", domain.OverrideNone, "", domain.OutcomeFailed, domain.EventTurnFailed,
			domain.KindTurnFailed, "agent reported a cancelled stop reason without a cancellation on either side"},
		{"unknown", "paused", domain.OverrideNone, "", domain.OutcomeFailed, domain.EventTurnFailed,
			domain.KindTurnOutcomeUnknown, `agent reported an unrecognized stop reason: "paused"`},
		{"empty", "", domain.OverrideNone, "", domain.OutcomeFailed, domain.EventTurnFailed,
			domain.KindTurnOutcomeUnknown, `agent reported an unrecognized stop reason: ""`},
		{"unknown with quotes and control", "a\"b\n", domain.OverrideNone, "", domain.OutcomeFailed, domain.EventTurnFailed,
			domain.KindTurnOutcomeUnknown, `agent reported an unrecognized stop reason: "a\"b\n"`},
		{"case matters", "END_TURN", domain.OverrideNone, "", domain.OutcomeFailed, domain.EventTurnFailed,
			domain.KindTurnOutcomeUnknown, `agent reported an unrecognized stop reason: "END_TURN"`},
		{"unknown override value", "end_turn", domain.Override(42), "", domain.OutcomeCompleted, domain.EventTurnCompleted, "", ""},

		// Overrides ignore the stopReason.
		{"cancel over end_turn", "end_turn", domain.OverrideCancel, "", domain.OutcomeCancelled, domain.EventTurnCancelled,
			domain.KindTurnCancelled, "turn cancelled"},
		{"cancel over cancelled", "cancelled", domain.OverrideCancel, "", domain.OutcomeCancelled, domain.EventTurnCancelled,
			domain.KindTurnCancelled, "turn cancelled"},
		{"cancel over refusal", "refusal", domain.OverrideCancel, "ignored", domain.OutcomeCancelled, domain.EventTurnCancelled,
			domain.KindTurnCancelled, "turn cancelled"},
		{"cancel over missing", "", domain.OverrideCancel, "", domain.OutcomeCancelled, domain.EventTurnCancelled,
			domain.KindTurnCancelled, "turn cancelled"},
		{"input over end_turn", "end_turn", domain.OverrideInputRequired, "", domain.OutcomeInputRequired, domain.EventTurnInputRequired,
			domain.KindTurnInputRequired, "agent asked for a decision only a person can make"},
		{"input with detail", "cancelled", domain.OverrideInputRequired, domain.MsgPermissionUngrantable,
			domain.OutcomeInputRequired, domain.EventTurnInputRequired, domain.KindTurnInputRequired,
			"agent asked for a decision only a person can make: the agent needs a permission this unattended run cannot grant"},
		{"input with blank detail", "max_tokens", domain.OverrideInputRequired, "  \t", domain.OutcomeInputRequired, domain.EventTurnInputRequired,
			domain.KindTurnInputRequired, "agent asked for a decision only a person can make"},
		{"input detail trimmed", "weird", domain.OverrideInputRequired, " x ", domain.OutcomeInputRequired, domain.EventTurnInputRequired,
			domain.KindTurnInputRequired, "agent asked for a decision only a person can make: x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := domain.Disposition(tt.stopReason, tt.override, tt.detail)
			if r.Outcome != tt.wantOutcome {
				t.Errorf("Outcome = %q, want %q", r.Outcome, tt.wantOutcome)
			}
			if r.Outcome.Event() != tt.wantEvent {
				t.Errorf("Outcome.Event() = %q, want %q", r.Outcome.Event(), tt.wantEvent)
			}
			if r.StopReason != tt.stopReason {
				t.Errorf("StopReason = %q, want %q", r.StopReason, tt.stopReason)
			}
			if tt.wantKind == "" {
				if r.Err != nil {
					t.Errorf("Err = %v, want nil", r.Err)
				}
				if r.Message() != "" {
					t.Errorf("Message() = %q, want empty", r.Message())
				}
				return
			}
			if r.Err == nil {
				t.Fatalf("Err = nil, want kind %q", tt.wantKind)
			}
			if r.Err.Kind != tt.wantKind {
				t.Errorf("Kind = %q, want %q", r.Err.Kind, tt.wantKind)
			}
			if r.Message() != tt.wantMsg || r.Err.Message != tt.wantMsg {
				t.Errorf("Message() = %q, want %q", r.Message(), tt.wantMsg)
			}
		})
	}
}

func TestDispositionLongUnknownStopReason(t *testing.T) {
	r := domain.Disposition(strings.Repeat("z", 10000), domain.OverrideNone, "")
	if r.Err == nil || r.Err.Kind != domain.KindTurnOutcomeUnknown {
		t.Fatalf("Err = %v", r.Err)
	}
	if len(r.Message()) > 1000 {
		t.Errorf("message is %d bytes; the quoted stop reason should be cut", len(r.Message()))
	}
	if !strings.HasSuffix(r.Message(), `…"`) {
		t.Errorf("message %q should end with a cut quote", r.Message()[len(r.Message())-20:])
	}
}

func TestStopReasonConstants(t *testing.T) {
	tests := []struct{ got, want string }{
		{domain.StopEndTurn, "end_turn"},
		{domain.StopMaxTokens, "max_tokens"},
		{domain.StopMaxTurnRequests, "max_turn_requests"},
		{domain.StopRefusal, "refusal"},
		{domain.StopCancelled, "cancelled"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("constant = %q, want %q", tt.got, tt.want)
		}
	}
}

func TestFailedResult(t *testing.T) {
	tests := []struct {
		name        string
		err         *domain.AgentError
		wantOutcome domain.Outcome
		wantKind    domain.ErrorKind
		wantMsg     string
	}{
		{"cancelled", domain.NewError(domain.KindTurnCancelled, domain.MsgTurnCancelled),
			domain.OutcomeCancelled, domain.KindTurnCancelled, "turn cancelled"},
		{"input required", domain.NewError(domain.KindTurnInputRequired, domain.MsgInputRequired),
			domain.OutcomeInputRequired, domain.KindTurnInputRequired, domain.MsgInputRequired},
		{"port exit", domain.NewError(domain.KindPortExit, domain.MsgConnEndedBeforeResult),
			domain.OutcomeFailed, domain.KindPortExit, domain.MsgConnEndedBeforeResult},
		{"response error", domain.NewError(domain.KindResponseError, domain.MsgTurnInFlight),
			domain.OutcomeFailed, domain.KindResponseError, domain.MsgTurnInFlight},
		{"line too long", domain.NewError(domain.KindTurnOutcomeUnknown, domain.MsgLineTooLong),
			domain.OutcomeFailed, domain.KindTurnOutcomeUnknown, domain.MsgLineTooLong},
		{"timeout", domain.NewError(domain.KindResponseTimeout, domain.MsgTimedOut),
			domain.OutcomeFailed, domain.KindResponseTimeout, domain.MsgTimedOut},
		{"nil", nil, domain.OutcomeFailed, domain.KindTurnFailed, "turn failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := domain.FailedResult(tt.err)
			if r.Outcome != tt.wantOutcome {
				t.Errorf("Outcome = %q, want %q", r.Outcome, tt.wantOutcome)
			}
			if r.Err == nil || r.Err.Kind != tt.wantKind || r.Message() != tt.wantMsg {
				t.Errorf("Err = %v, want kind %q message %q", r.Err, tt.wantKind, tt.wantMsg)
			}
			if tt.err != nil && r.Err != tt.err {
				t.Errorf("Err is not the given error")
			}
			if r.StopReason != "" {
				t.Errorf("StopReason = %q, want empty", r.StopReason)
			}
		})
	}
}

func TestOutcomeEvent(t *testing.T) {
	tests := []struct {
		o    domain.Outcome
		want domain.EventType
	}{
		{domain.OutcomeCompleted, domain.EventTurnCompleted},
		{domain.OutcomeFailed, domain.EventTurnFailed},
		{domain.OutcomeCancelled, domain.EventTurnCancelled},
		{domain.OutcomeInputRequired, domain.EventTurnInputRequired},
	}
	for _, tt := range tests {
		if got := tt.o.Event(); got != tt.want {
			t.Errorf("%q.Event() = %q, want %q", tt.o, got, tt.want)
		}
	}
	var zero domain.TurnResult
	if zero.Message() != "" {
		t.Errorf("zero TurnResult Message() = %q", zero.Message())
	}
}
