package acpwire_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
)

// The runtimes' texts of a spent usage window and Gemini CLI's passing on
// of the provider's body (docs/behaviour.md#usage-windows): Claude
// 0.101.0 with errorKind rate_limit (it was rate_limited, retryable, no
// wait), 0.23.1 with no data (it was unknown, retryable), Gemini CLI
// 0.61.0 a 400 carrying API_KEY_INVALID (it was unknown, retryable).
func TestClassifyUsageWindowsAndGoogleBodies(t *testing.T) {
	now := time.Date(2026, 12, 7, 17, 0, 0, 0, time.UTC)
	cases := []struct {
		name      string
		err       domain.RPCError
		class     domain.FailureClass
		retryable bool
		after     time.Duration
	}{
		{"claude 0.101.0 five-hour window", domain.RPCError{Code: -32603, Message: "Internal error: You've hit your 5-hour limit · resets 5:32pm (UTC)", Data: []byte(`{"errorKind":"rate_limit"}`)},
			domain.FailureQuotaExhausted, true, 32 * time.Minute},
		{"claude 0.23.1 session window", domain.RPCError{Code: -32603, Message: "Internal error: You've hit your session limit · resets 5:33pm (UTC)"},
			domain.FailureQuotaExhausted, true, 33 * time.Minute},
		{"weekly, a date", domain.RPCError{Code: -32603, Message: "Internal error: You've hit your weekly limit · resets Dec 9, 5pm (UTC)", Data: []byte(`{"errorKind":"rate_limit"}`)},
			domain.FailureQuotaExhausted, true, 48 * time.Hour},
		{"spend limit", domain.RPCError{Code: -32603, Message: "Internal error: You've hit your monthly spend limit · resets 2026-12-08 00:00 UTC"},
			domain.FailureQuotaExhausted, true, 7 * time.Hour},
		{"a window already reset an hour ago is tomorrow's", domain.RPCError{Code: -32603, Message: "Internal error: You've hit your 5-hour limit · resets 4pm (UTC)"},
			domain.FailureQuotaExhausted, true, 23 * time.Hour},
		{"spend limit without a reset", domain.RPCError{Code: -32603, Message: "Internal error: You've hit your monthly spend limit."},
			domain.FailureQuotaExhausted, false, 0},
		{"gemini API_KEY_INVALID", domain.RPCError{Code: 400, Message: `{"error":{"code":400,"message":"API key expired. Please renew the API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com","metadata":{"service":"generativelanguage.googleapis.com"}}]}}`},
			domain.FailureAuthFailed, false, 0},
		{"gemini RetryInfo", domain.RPCError{Code: 429, Message: `{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"17s"}]}}`},
			domain.FailureRateLimited, true, 17 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := acpwire.RuntimeFailures.ClassifyRPCErrorAt(c.err, now, time.LoadLocation)
			assert.Equal(t, c.class, f.Class, f.Evidence)
			assert.Equal(t, c.retryable, f.Retryable)
			assert.Equal(t, c.after, f.RetryAfter)
		})
	}
}
