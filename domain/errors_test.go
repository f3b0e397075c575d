package domain_test

import (
	"errors"
	"fmt"
	"io"
	"math"
	"testing"
	"time"

	"github.com/acpdrive/acpdrive/domain"
)

func TestErrorKindStrings(t *testing.T) {
	tests := []struct {
		kind domain.ErrorKind
		want string
	}{
		{domain.KindAgentNotFound, "agent_not_found"},
		{domain.KindInvalidWorkspaceCWD, "invalid_workspace_cwd"},
		{domain.KindResponseTimeout, "response_timeout"},
		{domain.KindTurnTimeout, "turn_timeout"},
		{domain.KindPortExit, "port_exit"},
		{domain.KindResponseError, "response_error"},
		{domain.KindTurnFailed, "turn_failed"},
		{domain.KindTurnCancelled, "turn_cancelled"},
		{domain.KindTurnInputRequired, "turn_input_required"},
		{domain.KindTurnRefused, "turn_refused"},
		{domain.KindTurnTokenLimit, "turn_token_limit"},
		{domain.KindTurnRequestLimit, "turn_request_limit"},
		{domain.KindTurnOutcomeUnknown, "turn_outcome_unknown"},
		{domain.KindCredentialUnverified, "credential_unverified"},
	}
	for _, tt := range tests {
		if string(tt.kind) != tt.want || tt.kind.Error() != tt.want {
			t.Errorf("kind %q: string %q, Error() %q; want %q", tt.kind, string(tt.kind), tt.kind.Error(), tt.want)
		}
	}
}

func TestErrorKindRetryable(t *testing.T) {
	tests := []struct {
		kind domain.ErrorKind
		want bool
	}{
		{domain.KindAgentNotFound, false},
		{domain.KindInvalidWorkspaceCWD, false},
		{domain.KindResponseTimeout, true},
		{domain.KindTurnTimeout, true},
		{domain.KindPortExit, true},
		{domain.KindResponseError, true},
		{domain.KindTurnFailed, true},
		{domain.KindTurnCancelled, false},
		{domain.KindTurnInputRequired, false},
		{domain.KindTurnRefused, false},
		{domain.KindTurnTokenLimit, false},
		{domain.KindTurnRequestLimit, true},
		{domain.KindTurnOutcomeUnknown, false},
		{domain.KindCredentialUnverified, true},
		{domain.ErrorKind("something_else"), false},
		{domain.ErrorKind(""), false},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			if got := tt.kind.Retryable(); got != tt.want {
				t.Errorf("Retryable() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAgentErrorText(t *testing.T) {
	tests := []struct {
		name string
		err  *domain.AgentError
		want string
	}{
		{
			name: "no cause",
			err:  domain.NewError(domain.KindInvalidWorkspaceCWD, domain.MsgEmptyWorkspace),
			want: "agent: invalid_workspace_cwd: empty workspace path",
		},
		{
			name: "with cause",
			err:  domain.WrapError(domain.KindPortExit, "failed to start subprocess", errors.New("fork: resource temporarily unavailable")),
			want: "agent: port_exit: failed to start subprocess: fork: resource temporarily unavailable",
		},
		{
			name: "cause equal to message",
			err:  domain.WrapError(domain.KindResponseTimeout, domain.MsgTimedOut, errors.New(domain.MsgTimedOut)),
			want: "agent: response_timeout: timed out waiting for a response",
		},
		{
			name: "nil cause via WrapError",
			err:  domain.WrapError(domain.KindPortExit, domain.MsgConnEndedBeforeResponding, nil),
			want: "agent: port_exit: agent connection ended before responding",
		},
		{
			name: "empty message with cause",
			err:  domain.WrapError(domain.KindPortExit, "", io.EOF),
			want: "agent: port_exit: EOF",
		},
		{
			name: "nil receiver",
			err:  nil,
			want: "agent: <nil>",
		},
		{
			name: "empty message without cause",
			err:  domain.NewError(domain.KindTurnFailed, ""),
			want: "agent: turn_failed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestAgentErrorIsAndUnwrap(t *testing.T) {
	cause := io.ErrUnexpectedEOF
	base := domain.WrapError(domain.KindPortExit, domain.MsgConnEndedBeforeResult, cause)
	wrapped := fmt.Errorf("turn 3: %w", base)
	twice := fmt.Errorf("run: %w", wrapped)

	tests := []struct {
		name   string
		err    error
		target error
		want   bool
	}{
		{"direct kind", base, domain.KindPortExit, true},
		{"wrapped kind", wrapped, domain.KindPortExit, true},
		{"wrapped twice", twice, domain.KindPortExit, true},
		{"other kind", twice, domain.KindResponseError, false},
		{"cause through chain", twice, io.ErrUnexpectedEOF, true},
		{"unrelated sentinel", twice, io.EOF, false},
		{"plain error", errors.New("port_exit"), domain.KindPortExit, false},
		{"bare kind wrapped", fmt.Errorf("x: %w", domain.KindTurnCancelled), domain.KindTurnCancelled, true},
		{"joined", errors.Join(errors.New("a"), base), domain.KindPortExit, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errors.Is(tt.err, tt.target); got != tt.want {
				t.Errorf("errors.Is = %v, want %v", got, tt.want)
			}
		})
	}
	if got := base.Unwrap(); got != cause {
		t.Errorf("Unwrap() = %v, want %v", got, cause)
	}
	if got := domain.NewError(domain.KindPortExit, "x").Unwrap(); got != nil {
		t.Errorf("Unwrap() without cause = %v, want nil", got)
	}
}

func TestKindOf(t *testing.T) {
	inner := domain.NewError(domain.KindResponseError, "session/new error -32603: boom")
	outer := domain.WrapError(domain.KindCredentialUnverified, "verification", inner)
	tests := []struct {
		name   string
		err    error
		want   domain.ErrorKind
		wantOK bool
	}{
		{"nil", nil, "", false},
		{"plain", errors.New("x"), "", false},
		{"agent error", inner, domain.KindResponseError, true},
		{"wrapped", fmt.Errorf("ctx: %w", inner), domain.KindResponseError, true},
		{"outermost agent error wins", fmt.Errorf("ctx: %w", outer), domain.KindCredentialUnverified, true},
		{"bare kind", fmt.Errorf("ctx: %w", domain.KindTurnTimeout), domain.KindTurnTimeout, true},
		{"typed nil", (*domain.AgentError)(nil), "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := domain.KindOf(tt.err)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("KindOf = (%q, %v), want (%q, %v)", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestRetryBackoff(t *testing.T) {
	tests := []struct {
		attempt int
		max     time.Duration
		want    time.Duration
	}{
		{1, 5 * time.Minute, 10 * time.Second},
		{2, 5 * time.Minute, 20 * time.Second},
		{3, 5 * time.Minute, 40 * time.Second},
		{4, 5 * time.Minute, 80 * time.Second},
		{5, 5 * time.Minute, 160 * time.Second},
		{6, 5 * time.Minute, 5 * time.Minute}, // 320 s capped
		{7, 5 * time.Minute, 5 * time.Minute},
		{100, 5 * time.Minute, 5 * time.Minute},
		{math.MaxInt, 5 * time.Minute, 5 * time.Minute},
		{0, 5 * time.Minute, 10 * time.Second},
		{-3, 5 * time.Minute, 10 * time.Second},
		{1, 5 * time.Second, 5 * time.Second},             // cap below the base
		{3, 40 * time.Second, 40 * time.Second},           // exactly the cap
		{3, 0, 40 * time.Second},                          // non-positive: uncapped
		{200, -time.Second, time.Duration(math.MaxInt64)}, // saturates
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("attempt=%d/max=%s", tt.attempt, tt.max), func(t *testing.T) {
			if got := domain.RetryBackoff(tt.attempt, tt.max); got != tt.want {
				t.Errorf("RetryBackoff(%d, %s) = %s, want %s", tt.attempt, tt.max, got, tt.want)
			}
		})
	}
}

func TestErrorMessageConstants(t *testing.T) {
	tests := []struct{ got, want string }{
		{domain.MsgEmptyWorkspace, "empty workspace path"},
		{domain.MsgWorkspaceMissing, "workspace path does not exist"},
		{domain.MsgWorkspaceNotDir, "workspace path is not a directory"},
		{domain.MsgEmptyCommand, "agent command is empty or whitespace-only"},
		{domain.MsgConnEndedBeforeResponding, "agent connection ended before responding"},
		{domain.MsgTimedOut, "timed out waiting for a response"},
		{domain.MsgTurnInFlight, "a turn is already in flight for this session"},
		{domain.MsgConnEndedBeforeResult, "the agent's connection ended before a response arrived"},
		{domain.MsgOutputNotCollected, "the agent runtime exited before the session finished collecting its output"},
		{domain.MsgPromptSendFailed, "failed to send the prompt to the agent"},
		{domain.MsgLineTooLong, "a line from the agent exceeded the connection's line bound"},
		{domain.MsgPromptUndecodable, "the agent's response to the prompt did not decode"},
		{domain.MsgUnaskedCancel, "agent reported a cancelled stop reason without a cancellation on either side"},
		{domain.MsgTurnCancelled, "turn cancelled"},
		{domain.MsgInputRequired, "agent asked for a decision only a person can make"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("constant = %q, want %q", tt.got, tt.want)
		}
	}
}
