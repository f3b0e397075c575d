package acpwire_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
)

// The shapes below are what the runtimes send (docs/behaviour.md#failures):
// the Claude adapter 0.101.0 answers -32603 "Internal error: <text>" with
// data {"errorKind":…}; codex-acp 2.6.0 -32603 with data {"message",
// "codexErrorInfo", "additionalDetails"?}; codex-acp 0.16.0 data with
// codex_error_info; Gemini CLI the provider's HTTP status as the code;
// every ACP runtime -32000 "Authentication required".
func TestClassifyRPCError(t *testing.T) {
	cases := []struct {
		name      string
		err       domain.RPCError
		class     domain.FailureClass
		retryable bool
		status    int
		after     time.Duration
	}{
		{"claude rate limit", domain.RPCError{Code: -32603, Message: "Internal error: API Error: Request rejected (429) · Number of request tokens has exceeded your per-minute rate limit", Data: []byte(`{"errorKind":"rate_limit"}`)},
			domain.FailureRateLimited, true, 429, 0},
		{"claude overloaded", domain.RPCError{Code: -32603, Message: "Internal error: API Error: Repeated 529 Overloaded errors. The API is at capacity — this is usually temporary. Try again in a moment.", Data: []byte(`{"errorKind":"server_error"}`)},
			domain.FailureOverloaded, true, 529, 0},
		{"claude server error", domain.RPCError{Code: -32603, Message: "Internal error: API Error: 500 boom", Data: []byte(`{"errorKind":"server_error"}`)},
			domain.FailureOverloaded, true, 500, 0},
		{"claude prompt too long 0.101.0", domain.RPCError{Code: -32603, Message: "Internal error: Prompt is too long · the request is ~208310 tokens (limit 200000) but this conversation is only ~2602 tokens — the rest is system prompt, tool definitions, and attachment content. A single-exchange conversation cannot be compacted; reduce attached files/tools or start with less context.", Data: []byte(`{"errorKind":"invalid_request"}`)},
			domain.FailureContextOverflow, false, 0, 0},
		{"claude billing", domain.RPCError{Code: -32603, Message: "Internal error: Credit balance is too low", Data: []byte(`{"errorKind":"billing_error"}`)},
			domain.FailureQuotaExhausted, false, 0, 0},
		{"claude credit text alone", domain.RPCError{Code: -32603, Message: "Internal error: Credit balance is too low"},
			domain.FailureQuotaExhausted, false, 0, 0},
		{"claude prompt too long", domain.RPCError{Code: -32603, Message: "Internal error: Prompt is too long", Data: []byte(`{"errorKind":"invalid_request"}`)},
			domain.FailureContextOverflow, false, 0, 0},
		{"claude prompt too long with figures", domain.RPCError{Code: -32603, Message: "Internal error: Prompt is too long: 208310 tokens > 200000 maximum", Data: []byte(`{"errorKind":"invalid_request"}`)},
			domain.FailureContextOverflow, false, 0, 0},
		{"claude stream dropped", domain.RPCError{Code: -32603, Message: "Internal error: The turn ended without a result: the agent went idle while this prompt was still in flight (e.g. the model stream dropped mid-turn). Any partial output may be incomplete; please retry.", Data: []byte(`{"errorKind":"no_result"}`)},
			domain.FailureStreamDropped, true, 0, 0},
		{"claude stream dropped text", domain.RPCError{Code: -32603, Message: "Internal error: The turn ended without a result: the agent went idle while this prompt was still in flight (e.g. the model stream dropped mid-turn). Any partial output may be incomplete; please retry."},
			domain.FailureStreamDropped, true, 0, 0},
		{"claude 0.23.1 429 text", domain.RPCError{Code: -32603, Message: `Internal error: API Error: 429 {"error":{"message":"Number of request tokens has exceeded your per-minute rate limit","type":"rate_limit_error"},"type":"error"}`},
			domain.FailureRateLimited, true, 429, 0},
		{"claude 0.23.1 invalid key", domain.RPCError{Code: -32603, Message: "Internal error: Invalid API key · Fix external API key"},
			domain.FailureAuthFailed, false, 0, 0},
		{"auth required", domain.RPCError{Code: -32000, Message: "Authentication required"},
			domain.FailureAuthFailed, false, 0, 0},
		{"codex quota", domain.RPCError{Code: -32603, Message: "Internal error", Data: []byte(`{"message":"Quota exceeded. Check your plan and billing details.","codexErrorInfo":"usageLimitExceeded"}`)},
			domain.FailureQuotaExhausted, false, 0, 0},
		{"codex 2 rate limit status", domain.RPCError{Code: -32603, Message: "Internal error", Data: []byte(`{"message":"exceeded retry limit","codexErrorInfo":{"responseTooManyFailedAttempts":{"httpStatusCode":429}}}`)},
			domain.FailureRateLimited, true, 429, 0},
		{"codex 2 stream disconnected without status", domain.RPCError{Code: -32603, Message: "Internal error", Data: []byte(`{"message":"stream disconnected before completion","codexErrorInfo":{"responseStreamDisconnected":{"httpStatusCode":null}}}`)},
			domain.FailureStreamDropped, true, 0, 0},
		{"codex 0.16 snake case", domain.RPCError{Code: -32603, Message: "Internal error", Data: []byte(`{"message":"unexpected status 429","codex_error_info":{"http_status_code":429}}`)},
			domain.FailureRateLimited, true, 429, 0},
		{"codex context window", domain.RPCError{Code: -32603, Message: "Internal error", Data: []byte(`{"message":"Codex ran out of room in the model's context window. Start a new thread or clear earlier history before retrying.","codexErrorInfo":"contextWindowExceeded"}`)},
			domain.FailureContextOverflow, false, 0, 0},
		{"codex 0.16 503 text", domain.RPCError{Code: -32603, Message: "Internal error", Data: []byte(`{"message":"unexpected status 503 Service Unavailable: The server is overloaded or not ready yet., url: http://127.0.0.1:43895/v1/responses","codex_error_info":"other"}`)},
			domain.FailureOverloaded, true, 503, 0},
		{"codex 0.16 401 text", domain.RPCError{Code: -32603, Message: "Internal error", Data: []byte(`{"message":"unexpected status 401 Unauthorized: Incorrect API key provided: fake-ope**-key., url: http://127.0.0.1:45493/v1/responses","codex_error_info":"other"}`)},
			domain.FailureAuthFailed, false, 401, 0},
		{"codex 0.16 context body", domain.RPCError{Code: -32603, Message: "Internal error", Data: []byte(`{"message":"{\"error\":{\"message\":\"Your input exceeds the context window of this model. Please adjust your input and try again.\",\"type\":\"invalid_request_error\",\"param\":\"input\",\"code\":\"context_length_exceeded\"}}","codex_error_info":"other"}`)},
			domain.FailureContextOverflow, false, 0, 0},
		{"codex 0.16 429 and quota alike", domain.RPCError{Code: -32603, Message: "Internal error", Data: []byte(`{"message":"exceeded retry limit, last status: 429 Too Many Requests","codex_error_info":{"response_too_many_failed_attempts":{"http_status_code":429}}}`)},
			domain.FailureRateLimited, true, 429, 0},
		{"a codex text without codex data is prose", domain.RPCError{Code: -32603, Message: "Internal error", Data: []byte(`{"message":"unexpected status 503 Service Unavailable: x"}`)},
			domain.FailureUnknown, true, 0, 0},
		{"gemini 429 as code", domain.RPCError{Code: 429, Message: "Resource exhausted"},
			domain.FailureRateLimited, true, 429, 0},
		{"gemini 503 as code", domain.RPCError{Code: 503, Message: "The model is overloaded."},
			domain.FailureOverloaded, true, 503, 0},
		{"gemini 401 as code", domain.RPCError{Code: 401, Message: "API key not valid"},
			domain.FailureAuthFailed, false, 401, 0},
		{"gemini daily quota", domain.RPCError{Code: 429, Message: "You have exhausted your daily quota on this model."},
			domain.FailureQuotaExhausted, false, 429, 0},
		{"gemini context body", domain.RPCError{Code: 400, Message: `{"error":{"code":400,"message":"The input token count (1048577) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}`},
			domain.FailureContextOverflow, false, 400, 0},
		{"gemini 400 unknown", domain.RPCError{Code: 400, Message: "bad request"},
			domain.FailureUnknown, true, 400, 0},
		{"retry after in data", domain.RPCError{Code: 429, Message: "slow down", Data: []byte(`{"retryAfterMs":17000}`)},
			domain.FailureRateLimited, true, 429, 17 * time.Second},
		{"retry after never on a non-retryable class", domain.RPCError{Code: -32000, Message: "Authentication required", Data: []byte(`{"retry_after":3}`)},
			domain.FailureAuthFailed, false, 0, 0},
		{"prose is not a documented text", domain.RPCError{Code: -32603, Message: "Internal error: the tool said: Prompt is too long"},
			domain.FailureUnknown, true, 0, 0},
		{"plain internal error", domain.RPCError{Code: -32603, Message: "Internal error"},
			domain.FailureUnknown, true, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := acpwire.RuntimeFailures.ClassifyRPCError(c.err)
			assert.Equal(t, c.class, f.Class, f.Evidence)
			assert.Equal(t, c.retryable, f.Retryable)
			assert.Equal(t, c.status, f.ProviderStatus)
			assert.Equal(t, c.after, f.RetryAfter)
			assert.NotEmpty(t, f.Evidence)
		})
	}
}

func TestClassifyReply(t *testing.T) {
	cases := []struct {
		name, agent, version, reply string
		class                       domain.FailureClass
		status                      int
		ok                          bool
	}{
		{"the 2.6.0 agentInfo name", "@agentclientprotocol/codex-acp", "2.6.0", "exceeded retry limit, last status: 429 Too Many Requests\n\n", domain.FailureRateLimited, 429, true},
		{"503 as measured", "@agentclientprotocol/codex-acp", "2.6.0", "unexpected status 503 Service Unavailable: The server is overloaded or not ready yet., url: http://127.0.0.1:44821/v1/responses\n\n", domain.FailureOverloaded, 503, true},
		{"context body as measured", "@agentclientprotocol/codex-acp", "2.6.0", `{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}`, domain.FailureContextOverflow, 0, true},
		{"another npm name", "@other/codex-acp-like", "2.6.0", "exceeded retry limit, last status: 429 Too Many Requests", "", 0, false},
		{"429 after retries", "codex-acp", "2.6.0", "exceeded retry limit, last status: 429 Too Many Requests\n\n", domain.FailureRateLimited, 429, true},
		{"429 with request id", "codex-acp", "2.6.0", "exceeded retry limit, last status: 429 Too Many Requests, request id: abc", domain.FailureRateLimited, 429, true},
		{"503", "codex-acp", "2.6.0", `unexpected status 503 Service Unavailable: {"error":{"message":"overloaded","type":"server_error"}}`, domain.FailureOverloaded, 503, true},
		{"401", "codex-acp", "2.6.0", `unexpected status 401 Unauthorized: {"error":{"message":"bad key"}}`, domain.FailureAuthFailed, 401, true},
		{"400 context overflow body", "codex-acp", "2.6.0", `unexpected status 400 Bad Request: {"error": {"message": "Your input exceeds the context window of this model. Please adjust your input and try again.", "code": "context_length_exceeded"}}`, domain.FailureContextOverflow, 400, true},
		{"context overflow body alone", "codex-acp", "2.6.0", `{"error": {"message": "Your input exceeds the context window of this model. Please adjust your input and try again."}}`, domain.FailureContextOverflow, 0, true},
		{"codex context text", "codex-acp", "2.6.0", "Codex ran out of room in the model's context window. Start a new thread or clear earlier history before retrying.", domain.FailureContextOverflow, 0, true},
		{"prose around the text", "codex-acp", "2.6.0", "I saw: exceeded retry limit, last status: 429 Too Many Requests", "", 0, false},
		{"a multi-line answer", "codex-acp", "2.6.0", "exceeded retry limit, last status: 429 Too Many Requests\nthen I went on", "", 0, false},
		{"a normal reply", "codex-acp", "2.6.0", "Hello.", "", 0, false},
		{"another runtime", "claude-agent-acp", "0.101.0", "exceeded retry limit, last status: 429 Too Many Requests", "", 0, false},
		{"codex-acp 0.x", "codex-acp", "0.16.0", "exceeded retry limit, last status: 429 Too Many Requests", "", 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, ok := acpwire.RuntimeFailures.ClassifyReply(c.agent, c.version, c.reply)
			require.Equal(t, c.ok, ok, f.Evidence)
			if ok {
				assert.Equal(t, c.class, f.Class, f.Evidence)
				assert.Equal(t, c.status, f.ProviderStatus)
				assert.Equal(t, c.class.Retryable(), f.Retryable)
			}
		})
	}
}

// The session failure extension's record on a prompt response (the Claude
// adapter 0.101.0 and codex-acp 2.6.0 with the extension declared).
func TestClassifyFailureMarker(t *testing.T) {
	rec := func(category, severity string, actions ...string) []byte {
		b, _ := json.Marshal(map[string]any{"quota": map[string]any{}, "jetbrains": map[string]any{"air": map[string]any{
			"version": 1, "sessionFailure": map[string]any{"id": "t:error", "revision": 1, "category": category,
				"severity": severity, "title": "Claude is temporarily rate limited.", "actions": actions}}}})
		return b
	}
	cases := []struct {
		meta  []byte
		class domain.FailureClass
		ok    bool
	}{
		{rec("limit", "error", "retry"), domain.FailureRateLimited, true},
		{rec("limit", "error"), domain.FailureQuotaExhausted, true},
		{rec("limit", "error", "new_session"), domain.FailureContextOverflow, true},
		{rec("access", "error", "login"), domain.FailureAuthFailed, true},
		{rec("service", "error", "retry"), domain.FailureOverloaded, true},
		{rec("connection", "error", "new_session"), domain.FailureStreamDropped, true},
		{rec("request", "error"), domain.FailureUnknown, true},
		{rec("limit", "warning"), "", false},
		{[]byte(`{"quota":{"token_count":null}}`), "", false},
		{nil, "", false},
	}
	for i, c := range cases {
		f, ok := acpwire.RuntimeFailures.ClassifyFailureMarker(c.meta)
		require.Equal(t, c.ok, ok, i)
		assert.Equal(t, c.class, f.Class, i)
	}
	f, _ := acpwire.RuntimeFailures.ClassifyFailureMarker(rec("request", "error"))
	assert.False(t, f.Retryable, "an unknown marker without a retry action is not retryable")

	// The Claude adapter 0.101.0's record of a context overflow: category
	// request, the text as its title.
	tooLong := []byte(`{"jetbrains":{"air":{"version":1,"sessionFailure":{"id":"t:error","revision":1,"category":"request","severity":"error","title":"Prompt is too long · the request is ~208310 tokens (limit 200000) but this conversation is only ~2604 tokens — the rest is system prompt.","actions":[]}}}}`)
	f, ok := acpwire.RuntimeFailures.ClassifyFailureMarker(tooLong)
	require.True(t, ok)
	assert.Equal(t, domain.FailureContextOverflow, f.Class)
	rate := []byte(`{"jetbrains":{"air":{"version":1,"sessionFailure":{"id":"t:error","revision":1,"category":"limit","severity":"error","title":"API Error: Request rejected (429) · Number of request tokens has exceeded your per-minute rate limit","actions":["retry"]}}}}`)
	f, _ = acpwire.RuntimeFailures.ClassifyFailureMarker(rate)
	assert.Equal(t, domain.Failure{Class: domain.FailureRateLimited, Retryable: true, ProviderStatus: 429, Evidence: f.Evidence}, f)
}

func TestClassifyRetrySignal(t *testing.T) {
	codex := []byte(`{"codex":{"error":{"message":"Reconnecting... 2/5","codexErrorInfo":{"responseStreamDisconnected":{"httpStatusCode":429}},"additionalDetails":"exceeded retry limit","turnId":"t1","willRetry":true}}}`)
	r, ok := acpwire.RuntimeFailures.ClassifyRetrySignal(codex)
	require.True(t, ok)
	assert.Equal(t, domain.RuntimeRetry{Class: domain.FailureRateLimited, Attempt: 2, MaxAttempts: 5, ProviderStatus: 429, Evidence: "Reconnecting... 2/5"}, r)

	codex503 := []byte(`{"codex":{"error":{"message":"Reconnecting... 1/5","codexErrorInfo":{"responseStreamConnectionFailed":{"httpStatusCode":503}},"willRetry":true}}}`)
	r, ok = acpwire.RuntimeFailures.ClassifyRetrySignal(codex503)
	require.True(t, ok)
	assert.Equal(t, domain.FailureOverloaded, r.Class)

	final := []byte(`{"codex":{"error":{"message":"exceeded retry limit","willRetry":false}}}`)
	_, ok = acpwire.RuntimeFailures.ClassifyRetrySignal(final)
	assert.False(t, ok, "a final error is no retry")

	claude := []byte(`{"jetbrains":{"air":{"version":1,"sessionFailure":{"id":"x","revision":1,"category":"limit","severity":"warning","title":"Retrying Claude, attempt 3 of 10.","actions":[]}}}}`)
	r, ok = acpwire.RuntimeFailures.ClassifyRetrySignal(claude)
	require.True(t, ok)
	assert.Equal(t, domain.RuntimeRetry{Class: domain.FailureRateLimited, Attempt: 3, MaxAttempts: 10, Evidence: "Retrying Claude, attempt 3 of 10."}, r)

	claudeService := []byte(`{"jetbrains":{"air":{"version":1,"sessionFailure":{"id":"x","revision":1,"category":"service","severity":"warning","title":"Retrying Claude, attempt 1 of 10.","actions":[]}}}}`)
	r, ok = acpwire.RuntimeFailures.ClassifyRetrySignal(claudeService)
	require.True(t, ok)
	assert.Equal(t, domain.FailureOverloaded, r.Class)

	advisory := []byte(`{"jetbrains":{"air":{"version":1,"sessionFailure":{"id":"x","revision":1,"category":"unknown","severity":"warning","title":"Model fallback","actions":[]}}}}`)
	_, ok = acpwire.RuntimeFailures.ClassifyRetrySignal(advisory)
	assert.False(t, ok, "an advisory is no retry")
	_, ok = acpwire.RuntimeFailures.ClassifyRetrySignal([]byte(`{"title":"x"}`))
	assert.False(t, ok)
}
