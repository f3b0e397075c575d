package domain_test

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
)

func TestClassRetryable(t *testing.T) {
	for c, want := range map[domain.FailureClass]bool{
		domain.FailureRateLimited: true, domain.FailureOverloaded: true, domain.FailureStreamDropped: true,
		domain.FailureUnknown: true, domain.FailureQuotaExhausted: false, domain.FailureAuthFailed: false,
		domain.FailureContextOverflow: false,
	} {
		assert.Equal(t, want, c.Retryable(), c)
	}
}

// codex-acp 2.6.0 reports a 429 after its own retries, a 503 and a context
// overflow as end_turn with the error's text as the reply.
func TestFailureJSON(t *testing.T) {
	f := domain.Failure{Class: domain.FailureRateLimited, Retryable: true, RetryAfter: 17 * time.Second, ProviderStatus: 429, Evidence: "error code 429"}
	b, err := json.Marshal(f)
	require.NoError(t, err)
	assert.JSONEq(t, `{"class":"rate_limited","retryable":true,"retry_after_ms":17000,"provider_status":429,"evidence":"error code 429"}`, string(b))
	var back domain.Failure
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, f, back)
	b, _ = json.Marshal(domain.Failure{Class: domain.FailureAuthFailed, Evidence: "e"})
	assert.JSONEq(t, `{"class":"auth_failed","retryable":false,"evidence":"e"}`, string(b))
	assert.Equal(t, "rate limited by the provider (HTTP 429); retryable, after 17s — error code 429", f.Text())
}

func TestTurnResultRetryableFollowsTheClass(t *testing.T) {
	res := domain.FailedResult(domain.NewError(domain.KindResponseError, "x"))
	assert.True(t, res.Retryable())
	res.Failure = &domain.Failure{Class: domain.FailureQuotaExhausted}
	assert.False(t, res.Retryable(), "response_error stays the kind; the class decides")
	assert.Equal(t, domain.KindResponseError, res.Err.Kind)
	assert.False(t, domain.TurnResult{Outcome: domain.OutcomeCompleted}.Retryable())
}

// vocab is a vocabulary of an imaginary runtime "acme" (the real one is
// protocol/acpwire's RuntimeFailures, tested there with the real shapes).
var vocab = domain.FailureVocabulary{
	DataKinds:      map[string]map[string]domain.FailureClass{"kind": {"slow_down": domain.FailureRateLimited, "busy": domain.FailureOverloaded}},
	DataInfos:      map[string]map[string]domain.FailureClass{"info": {"outofroom": domain.FailureContextOverflow}},
	Texts:          []domain.FailureText{{Pattern: regexp.MustCompile(`^No credit left$`), Class: domain.FailureQuotaExhausted, Source: "acme"}},
	StatusTexts:    []*regexp.Regexp{regexp.MustCompile(`^Failed \((\d{3})\)`)},
	BodyCodes:      map[string]domain.FailureClass{"too_long": domain.FailureContextOverflow},
	Reports:        []*regexp.Regexp{regexp.MustCompile(`^gave up at status (\d{3})$`)},
	ReplyRuntimes:  []domain.RuntimeVersion{{Name: "acme", VersionPrefix: "3."}},
	ReportFields:   []string{"info"},
	RetryPath:      []string{"acme", "error"},
	RetryInfoField: "info",
}

func TestVocabularyRPCError(t *testing.T) {
	cases := []struct {
		err    domain.RPCError
		class  domain.FailureClass
		status int
		after  time.Duration
	}{
		{domain.RPCError{Code: -32603, Message: "Internal error: Failed (503) busy", Data: []byte(`{"kind":"busy"}`)}, domain.FailureOverloaded, 503, 0},
		{domain.RPCError{Code: -32603, Message: "Internal error", Data: []byte(`{"kind":"slow_down","retryAfterMs":1500}`)}, domain.FailureRateLimited, 0, 1500 * time.Millisecond},
		{domain.RPCError{Code: -32603, Message: "Internal error", Data: []byte(`{"info":"out_of_room"}`)}, domain.FailureContextOverflow, 0, 0},
		{domain.RPCError{Code: -32603, Message: "Internal error", Data: []byte(`{"info":{"streamGone":{"httpStatusCode":429}}}`)}, domain.FailureRateLimited, 429, 0},
		{domain.RPCError{Code: -32603, Message: "Internal error: No credit left"}, domain.FailureQuotaExhausted, 0, 0},
		{domain.RPCError{Code: -32603, Message: "Internal error: I think there is No credit left"}, domain.FailureUnknown, 0, 0},
		{domain.RPCError{Code: 429, Message: "No credit left"}, domain.FailureQuotaExhausted, 429, 0},
		{domain.RPCError{Code: 429, Message: "slow"}, domain.FailureRateLimited, 429, 0},
		{domain.RPCError{Code: 400, Message: `{"error":{"message":"x","code":"too_long"}}`}, domain.FailureContextOverflow, 400, 0},
		{domain.RPCError{Code: -32000, Message: "Authentication required", Data: []byte(`{"retryAfter":3}`)}, domain.FailureAuthFailed, 0, 0},
		{domain.RPCError{Code: -32603, Message: "Internal error", Data: []byte(`{"message":"gave up at status 503","info":"other"}`)}, domain.FailureOverloaded, 503, 0},
		{domain.RPCError{Code: -32603, Message: "Internal error", Data: []byte(`{"message":"gave up at status 503"}`)}, domain.FailureUnknown, 0, 0},
	}
	for i, c := range cases {
		f := vocab.ClassifyRPCError(c.err)
		assert.Equal(t, c.class, f.Class, "%d: %s", i, f.Evidence)
		assert.Equal(t, c.status, f.ProviderStatus, i)
		assert.Equal(t, c.after, f.RetryAfter, i)
		assert.Equal(t, c.class.Retryable(), f.Retryable, i)
	}
}

func TestVocabularyReply(t *testing.T) {
	f, ok := vocab.ClassifyReply("@scope/acme", "3.1.0", "gave up at status 429\n\n")
	require.True(t, ok)
	assert.Equal(t, domain.FailureRateLimited, f.Class)
	_, ok = vocab.ClassifyReply("@scope/acme", "2.9.0", "gave up at status 429")
	assert.False(t, ok, "another version")
	_, ok = vocab.ClassifyReply("other", "3.1.0", "gave up at status 429")
	assert.False(t, ok, "another runtime")
	_, ok = vocab.ClassifyReply("acme", "3.1.0", "I read: gave up at status 429")
	assert.False(t, ok, "prose")
}

func TestVocabularyRetrySignal(t *testing.T) {
	r, ok := vocab.ClassifyRetrySignal([]byte(`{"acme":{"error":{"message":"Reconnecting... 2/5","info":{"streamGone":{"httpStatusCode":503}},"willRetry":true}}}`))
	require.True(t, ok)
	assert.Equal(t, domain.RuntimeRetry{Class: domain.FailureOverloaded, Attempt: 2, MaxAttempts: 5, ProviderStatus: 503, Evidence: "Reconnecting... 2/5"}, r)
	_, ok = vocab.ClassifyRetrySignal([]byte(`{"acme":{"error":{"message":"gave up","willRetry":false}}}`))
	assert.False(t, ok)
	r, ok = vocab.ClassifyRetrySignal([]byte(`{"jetbrains":{"air":{"version":1,"sessionFailure":{"category":"limit","severity":"warning","title":"Retrying, attempt 1 of 3.","actions":[]}}}}`))
	require.True(t, ok)
	assert.Equal(t, domain.FailureRateLimited, r.Class)
	assert.Equal(t, 3, r.MaxAttempts)
}
