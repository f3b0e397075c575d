//go:build interop

package interop

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// The provider failures fleets live in (docs/behaviour.md#failures),
// against fake model servers answering the providers' documented error
// shapes on every call: each turn ends with its class, never
// turn_completed. docs/runtimes.md records what each runtime does.

// failureShape is one provider failure as a fake server answers it.
type failureShape struct {
	name  string
	reply fakes.Reply
	class domain.FailureClass
}

// anthropicFailures are the Anthropic API's documented error shapes.
var anthropicFailures = []failureShape{
	{"429", fakes.Reply{Status: 429, ErrorMessage: "Number of request tokens has exceeded your per-minute rate limit", Header: http.Header{"Retry-After": {"1"}}}, domain.FailureRateLimited},
	{"529", fakes.Reply{Status: 529, ErrorMessage: "Overloaded"}, domain.FailureOverloaded},
	{"billing", fakes.Reply{Status: 400, ErrorMessage: "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}, domain.FailureQuotaExhausted},
	{"401", fakes.Reply{Status: 401, ErrorMessage: "invalid x-api-key"}, domain.FailureAuthFailed},
	{"context", fakes.Reply{Status: 400, ErrorMessage: "prompt is too long: 208310 tokens > 200000 maximum"}, domain.FailureContextOverflow},
}

// failureEvidence logs what a failed turn carried, for docs/runtimes.md.
func failureEvidence(t *testing.T, r *rig, res domain.TurnResult, took time.Duration, srv *fakes.Server) {
	var retries []string
	for _, ev := range r.rec.All() {
		if ev.Type == domain.EventRuntimeRetrying {
			retries = append(retries, ev.Message)
		}
	}
	f := "none"
	if res.Failure != nil {
		f = res.Failure.Text()
	}
	t.Logf("outcome %s kind %v stop %q after %s, %d model calls; failure: %s; reply %q; runtime_retrying %d: %s",
		res.Outcome, res.Err, res.StopReason, took.Round(time.Second), len(srv.ModelCalls()), f, res.Reply, len(retries), strings.Join(retries, " | "))
}

// assertFailure checks a failed turn's class and retryability.
func assertFailure(t *testing.T, res domain.TurnResult, class domain.FailureClass) {
	require.NotEqual(t, domain.OutcomeCompleted, res.Outcome, "a provider failure never completes")
	require.NotNil(t, res.Failure)
	assert.Equal(t, class, res.Failure.Class, res.Failure.Evidence)
	assert.Equal(t, class.Retryable(), res.Retryable())
}

// TestFailuresClaude: the Claude adapter 0.101.0 and 0.23.1, their own
// retries cut to 2 (CLAUDE_CODE_MAX_RETRIES) so a rate limit ends in
// seconds.
func TestFailuresClaude(t *testing.T) {
	t.Parallel()
	for _, row := range []string{"claude-current", "claude"} {
		for _, shape := range anthropicFailures {
			t.Run(row+"/"+shape.name, func(t *testing.T) {
				t.Parallel() // its own rig and fake server: the runtimes' retries overlap
				r, srv := claudeRigOf(t, row)
				r.setenv("CLAUDE_CODE_MAX_RETRIES", "2")
				srv.SetFallback(shape.reply)
				sess := r.mustStart(func(o *app.Options) { o.Settings.TurnTimeout = 150 * time.Second })
				t0 := time.Now()
				res := r.turn(sess, "say hello")
				failureEvidence(t, r, res, time.Since(t0), srv)
				assertFailure(t, res, shape.class)
			})
		}
	}
}

// openaiFailures are the OpenAI API's documented error shapes.
var openaiFailures = []failureShape{
	{"429", fakes.Reply{Status: 429, Header: http.Header{"Retry-After": {"1"}},
		ErrorBody: []byte(`{"error":{"message":"Rate limit reached for gpt-5.4 in organization org-fake on tokens per min (TPM): Limit 30000, Used 30000, Requested 100. Please try again in 1s.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`)}, domain.FailureRateLimited},
	{"503", fakes.Reply{Status: 503, ErrorBody: []byte(`{"error":{"message":"The server is overloaded or not ready yet.","type":"server_error","param":null,"code":null}}`)}, domain.FailureOverloaded},
	{"quota", fakes.Reply{Status: 429, ErrorBody: []byte(`{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`)}, domain.FailureQuotaExhausted},
	{"401", fakes.Reply{Status: 401, ErrorBody: []byte(`{"error":{"message":"Incorrect API key provided: fake-ope**-key.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`)}, domain.FailureAuthFailed},
	{"context", fakes.Reply{Status: 400, ErrorBody: []byte(`{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}`)}, domain.FailureContextOverflow},
}

// codexRetries rewrites the rig's codex config with codex's own retries
// on: n request and stream retries.
func codexRetries(t *testing.T, r *rig, n int) {
	path := filepath.Join(r.env["CODEX_HOME"], "config.toml")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	s := strings.ReplaceAll(string(b), "request_max_retries = 0", fmt.Sprintf("request_max_retries = %d", n))
	s = strings.ReplaceAll(s, "stream_max_retries = 0", fmt.Sprintf("stream_max_retries = %d", n))
	require.NoError(t, os.WriteFile(path, []byte(s), 0o600))
}

// TestFailuresCodex: codex-acp 0.16.0 and 2.6.0 against the OpenAI
// failure shapes, codex's own retries on (2).
func TestFailuresCodex(t *testing.T) {
	t.Parallel()
	for _, row := range []string{"codex-current", "codex"} {
		for _, shape := range openaiFailures {
			t.Run(row+"/"+shape.name, func(t *testing.T) {
				t.Parallel() // its own rig and fake server: the runtimes' retries overlap
				r, srv := codexRigOf(t, row)
				codexRetries(t, r, 2)
				srv.SetFallback(shape.reply)
				sess := r.mustStart(func(o *app.Options) { o.Settings.TurnTimeout = 150 * time.Second })
				t0 := time.Now()
				res := r.turn(sess, "say hello")
				failureEvidence(t, r, res, time.Since(t0), srv)
				class := shape.class
				if row == "codex" && shape.name == "quota" {
					// codex-acp 0.16.0 reports an exhausted quota
					// byte-identically to a rate limit (docs/runtimes.md).
					class = domain.FailureRateLimited
				}
				assertFailure(t, res, class)
			})
		}
	}
}

// TestFailuresFirstCallOnly: a provider failure on the first model call
// only is retried by the runtime itself, and the turn completes.
func TestFailuresFirstCallOnly(t *testing.T) {
	t.Parallel()
	ok := fakes.TextReply(fakes.Usage{Input: 10, Output: 2}, "Recovered.")
	t.Run("claude-current", func(t *testing.T) {
		r, srv := claudeRigOf(t, "claude-current")
		srv.Script(fakes.Reply{Status: 529, ErrorMessage: "Overloaded"}).SetFallback(ok)
		sess := r.mustStart()
		res := r.turn(sess, "say hello")
		require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
		assert.Nil(t, res.Failure)
		assert.Equal(t, "Recovered.", res.Reply)
	})
	for _, row := range []string{"codex-current", "codex"} {
		t.Run(row, func(t *testing.T) {
			r, srv := codexRigOf(t, row)
			codexRetries(t, r, 2)
			srv.Script(openaiFailures[1].reply).SetFallback(ok)
			sess := r.mustStart()
			res := r.turn(sess, "say hello")
			require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
			assert.Nil(t, res.Failure)
			assert.Equal(t, "Recovered.", res.Reply)
			var retrying int
			for _, ev := range r.rec.All() {
				if ev.Type == domain.EventRuntimeRetrying {
					retrying++
				}
			}
			// codex-acp 2.6.0 announces a retry it makes during a turn
			// (TestFailuresCodex); one of the first call may come before
			// it knows the turn, and is then not sent (measured: none).
			t.Logf("runtime_retrying events: %d", retrying)
		})
	}
}

// geminiFailures are the Gemini API's documented error shapes.
var geminiFailures = []failureShape{
	{"429", fakes.Reply{Status: 429, Header: http.Header{"Retry-After": {"1"}},
		ErrorBody: []byte(`{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}`)}, domain.FailureRateLimited},
	{"503", fakes.Reply{Status: 503, ErrorBody: []byte(`{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`)}, domain.FailureOverloaded},
	{"quota", fakes.Reply{Status: 429, ErrorBody: []byte(`{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerDayPerProjectPerModel-FreeTier"}]}]}}`)}, domain.FailureQuotaExhausted},
	{"401", fakes.Reply{Status: 401, ErrorBody: []byte(`{"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}`)}, domain.FailureAuthFailed},
	{"context", fakes.Reply{Status: 400, ErrorBody: []byte(`{"error":{"code":400,"message":"The input token count (1048577) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}`)}, domain.FailureContextOverflow},
	{"429-retryinfo", fakes.Reply{Status: 429, ErrorBody: []byte(`{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"2s"}]}}`)}, domain.FailureRateLimited},
	// An invalid or expired key is a 400 whose ErrorInfo names it.
	{"key-invalid", fakes.Reply{Status: 400, ErrorBody: []byte(`{"error":{"code":400,"message":"API key expired. Please renew the API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com","metadata":{"service":"generativelanguage.googleapis.com"}},{"@type":"type.googleapis.com/google.rpc.LocalizedMessage","locale":"en-US","message":"API key expired. Please renew the API key."}]}}`)}, domain.FailureAuthFailed},
}

// TestFailuresGemini: Gemini CLI against the Gemini failure shapes, its
// own attempts cut to 2 (general.maxAttempts).
func TestFailuresGemini(t *testing.T) {
	t.Parallel()
	for _, shape := range geminiFailures {
		t.Run(shape.name, func(t *testing.T) {
			t.Parallel() // its own rig and fake server: the runtimes' retries overlap
			r, srv := geminiRig(t, true)
			writeFile(t, filepath.Join(r.home, ".gemini", "settings.json"),
				`{"security":{"auth":{"selectedType":"gemini-api-key"}},"privacy":{"usageStatisticsEnabled":false},"general":{"maxAttempts":2}}`)
			srv.SetFallback(shape.reply)
			sess := r.mustStart(func(o *app.Options) { o.Settings.TurnTimeout = 150 * time.Second })
			t0 := time.Now()
			res := r.turn(sess, "say hello")
			failureEvidence(t, r, res, time.Since(t0), srv)
			assertFailure(t, res, shape.class)
		})
	}
}

// TestFailuresClaudeFailureChannel: with the session failure extension
// declared, the Claude adapter 0.101.0 announces each of its retries (a
// runtime_retrying event) and ends the turn end_turn with the failure's
// record on the response, which wins.
func TestFailuresClaudeFailureChannel(t *testing.T) {
	t.Parallel()
	for _, shape := range anthropicFailures {
		t.Run(shape.name, func(t *testing.T) {
			t.Parallel() // its own rig and fake server: the runtimes' retries overlap
			r, srv := claudeRigOf(t, "claude-current")
			r.setenv("CLAUDE_CODE_MAX_RETRIES", "2")
			srv.SetFallback(shape.reply)
			sess := r.mustStart(func(o *app.Options) {
				o.Settings.TurnTimeout = 150 * time.Second
				o.Settings.FailureChannel = true
			})
			t0 := time.Now()
			res := r.turn(sess, "say hello")
			failureEvidence(t, r, res, time.Since(t0), srv)
			assertFailure(t, res, shape.class)
		})
	}
}

// TestFailuresRunRetries: `acpdrive run --retries 2` against codex-acp
// 0.16.0 (which never retries a 429 itself) whose fake fails the first two
// turns with 429 and then answers completes, having waited the back-off
// (agent.max_retry_backoff_ms 1 s caps it) before each retry; against an
// exhausted quota on codex-acp 2.6.0 it stops at once.
func TestFailuresRunRetries(t *testing.T) {
	t.Parallel()
	retryLines := func(stdout string) (waits []map[string]any, result map[string]any) {
		for _, l := range strings.Split(stdout, "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) != nil {
				continue
			}
			switch m["type"] {
			case "retry_wait":
				waits = append(waits, m)
			case "turn_result":
				result = m
			}
		}
		return waits, result
	}
	workflow := func(t *testing.T, r *rig) string {
		words, err := json.Marshal(r.command)
		require.NoError(t, err)
		path := filepath.Join(r.root, "WORKFLOW.md")
		writeFile(t, path, "---\nagent:\n  kind: agent-client-protocol\n  command: "+string(words)+
			"\n  max_retry_backoff_ms: 1000\n---\nRetries.\n")
		return path
	}
	args := func(r *rig, wf string) []string {
		return append(append([]string{"run", "--json"}, r.launchFlags()...), "--no-measure", "--workflow", wf, "--retries", "2", "say hello")
	}
	t.Run("429 twice then an answer", func(t *testing.T) {
		r, srv := codexRigOf(t, "codex")
		codexRetries(t, r, 2)
		srv.Script(openaiFailures[0].reply, openaiFailures[0].reply).
			SetFallback(fakes.TextReply(fakes.Usage{Input: 10, Output: 2}, "Third time."))
		stdout, stderr, code := r.acpdrive(args(r, workflow(t, r))...)
		require.Equal(t, 0, code, stderr)
		waits, result := retryLines(stdout)
		require.Len(t, waits, 2, stdout)
		for i, w := range waits {
			assert.EqualValues(t, i+1, w["attempt"])
			assert.EqualValues(t, 1000, w["wait_ms"], "the back-off, capped")
			assert.Equal(t, "rate_limited", w["failure"].(map[string]any)["class"])
		}
		assert.Equal(t, "turn_completed", result["outcome"])
		assert.Equal(t, "Third time.", result["reply"])
		assert.Len(t, srv.ModelCalls(), 3)
	})
	t.Run("quota stops at once", func(t *testing.T) {
		r, srv := codexRigOf(t, "codex-current")
		srv.SetFallback(openaiFailures[2].reply)
		stdout, stderr, code := r.acpdrive(args(r, workflow(t, r))...)
		require.Equal(t, 1, code, stderr)
		waits, result := retryLines(stdout)
		assert.Empty(t, waits)
		assert.Equal(t, "turn_failed", result["outcome"])
		assert.Equal(t, false, result["retryable"])
		assert.Equal(t, "quota_exhausted", result["failure"].(map[string]any)["class"])
		assert.Len(t, srv.ModelCalls(), 1)
	})
}
