package domain_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
)

// Gemini CLI 0.61.0 passes the Gemini API's whole error body on as the
// JSON-RPC message, with the provider's status as the code.
const (
	bodyKeyInvalid = `{"error":{"code":400,"message":"API key expired. Please renew the API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com","metadata":{"service":"generativelanguage.googleapis.com"}},{"@type":"type.googleapis.com/google.rpc.LocalizedMessage","locale":"en-US","message":"API key expired. Please renew the API key."}]}}`
	bodyPerMinute  = `{"error":{"code":429,"message":"You exceeded your current quota.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"17s"}]}}`
	bodyPerDay     = `{"error":{"code":429,"message":"Quota exceeded.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier"}]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"3600s"}]}}`
)

func TestParseGoogleError(t *testing.T) {
	cases := []struct {
		name    string
		body    string
		ok      bool
		class   domain.FailureClass
		reasons []string
		delay   time.Duration
	}{
		{"key invalid", bodyKeyInvalid, true, domain.FailureAuthFailed, []string{"API_KEY_INVALID"}, 0},
		{"array form", "[" + bodyKeyInvalid + "]", true, domain.FailureAuthFailed, []string{"API_KEY_INVALID"}, 0},
		{"pretty printed", "{\n  \"error\": {\n    \"code\": 403,\n    \"status\": \"PERMISSION_DENIED\",\n    \"details\": [{\"@type\": \"type.googleapis.com/google.rpc.ErrorInfo\", \"reason\": \"SERVICE_DISABLED\"}]\n  }\n}\n", true, domain.FailureAuthFailed, []string{"SERVICE_DISABLED"}, 0},
		{"per minute", bodyPerMinute, true, domain.FailureRateLimited, nil, 17 * time.Second},
		{"per day", bodyPerDay, true, domain.FailureQuotaExhausted, nil, time.Hour},
		{"no details", `{"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}`, true, "", nil, 0},
		{"unknown reason", `{"error":{"code":400,"status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"SOMETHING_ELSE"}]}}`, true, "", []string{"SOMETHING_ELSE"}, 0},
		{"openai body", `{"error":{"message":"x","type":"invalid_request_error","code":"invalid_api_key"}}`, false, "", nil, 0},
		{"prose", `the key API_KEY_INVALID was refused`, false, "", nil, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, ok := domain.ParseGoogleError(c.body)
			require.Equal(t, c.ok, ok)
			assert.Equal(t, c.reasons, g.Reasons)
			assert.Equal(t, c.delay, g.RetryDelay)
			class, _, found := g.Class()
			assert.Equal(t, c.class != "", found)
			assert.Equal(t, c.class, class)
		})
	}
}

// The body decides over its status: a 400 whose ErrorInfo reason is a
// credential's is auth_failed, not retryable (it was unknown, retryable);
// RetryInfo gives retry_after on a retryable class only.
func TestVocabularyGoogleBody(t *testing.T) {
	cases := []struct {
		name      string
		err       domain.RPCError
		class     domain.FailureClass
		retryable bool
		after     time.Duration
		status    int
	}{
		{"API_KEY_INVALID", domain.RPCError{Code: 400, Message: bodyKeyInvalid}, domain.FailureAuthFailed, false, 0, 400},
		{"per minute", domain.RPCError{Code: 429, Message: bodyPerMinute}, domain.FailureRateLimited, true, 17 * time.Second, 429},
		{"per day", domain.RPCError{Code: 429, Message: bodyPerDay}, domain.FailureQuotaExhausted, false, 0, 429},
		{"plain 400", domain.RPCError{Code: 400, Message: `{"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT"}}`}, domain.FailureUnknown, false, 0, 400},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := vocab.ClassifyRPCError(c.err)
			assert.Equal(t, c.class, f.Class, f.Evidence)
			assert.Equal(t, c.after, f.RetryAfter)
			assert.Equal(t, c.status, f.ProviderStatus)
			if c.class != domain.FailureUnknown {
				assert.Equal(t, c.retryable, f.Retryable)
			}
		})
	}
}
