package main_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// retryScript fails the first two prompts 429 with a retry-after of 50 ms
// in the error's data, then completes; #quota fails with an exhausted
// quota every time.
const retryScript = `{"defaultTurn":"first","turns":{
 "first":{"next":"second","steps":[{"step":"error","error":{"code":429,"message":"Resource exhausted","data":{"retryAfterMs":50}}}]},
 "second":{"next":"ok","steps":[{"step":"error","error":{"code":429,"message":"Resource exhausted","data":{"retryAfterMs":50}}}]},
 "ok":{"steps":[{"step":"text","text":"Done."},{"step":"stop","stopReason":"end_turn"}]},
 "quota":{"steps":[{"step":"error","error":{"code":-32603,"message":"Internal error: Credit balance is too low","data":{"errorKind":"billing_error"}}}]}}}`

// TestRunRetries: run --retries 2 against a runtime that fails the first
// two turns with 429 completes, printing each wait (the runtime's
// retry-after); against an exhausted quota it stops at once, with the
// failure's class on turn_result.
func TestRunRetries(t *testing.T) {
	t.Parallel()
	cmd := agentWith(t, retryScript)
	stdout, stderr, code := runIn(t, t.TempDir(), "run", "--json", "--retries", "2", "--command", cmd, "go")
	require.Equal(t, 0, code, stderr+stdout)
	var waits []map[string]any
	var result map[string]any
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
	require.Len(t, waits, 2, stdout)
	for i, w := range waits {
		assert.EqualValues(t, i+1, w["attempt"])
		assert.EqualValues(t, 50, w["wait_ms"])
		assert.Equal(t, true, w["from_runtime"])
		assert.Equal(t, "rate_limited", w["failure"].(map[string]any)["class"])
	}
	assert.Equal(t, "turn_completed", result["outcome"])

	stdout, stderr, code = runIn(t, t.TempDir(), "run", "--json", "--retries", "2", "--command", cmd, "#quota")
	assert.Equal(t, 1, code, stderr)
	assert.NotContains(t, stdout, `"retry_wait"`)
	var res struct {
		Outcome   string `json:"outcome"`
		ErrorKind string `json:"error_kind"`
		Retryable *bool  `json:"retryable"`
		Failure   struct {
			Class     string `json:"class"`
			Retryable bool   `json:"retryable"`
			Evidence  string `json:"evidence"`
		} `json:"failure"`
	}
	for _, l := range strings.Split(stdout, "\n") {
		if strings.Contains(l, `"type":"turn_result"`) {
			require.NoError(t, json.Unmarshal([]byte(l), &res))
		}
	}
	assert.Equal(t, "turn_failed", res.Outcome)
	assert.Equal(t, "response_error", res.ErrorKind)
	require.NotNil(t, res.Retryable)
	assert.False(t, *res.Retryable, "retryable follows the class")
	assert.Equal(t, "quota_exhausted", res.Failure.Class)
	assert.False(t, res.Failure.Retryable)
	assert.Contains(t, res.Failure.Evidence, "billing_error")

	// Human output: one line for the failure, one for each wait.
	stdout, _, _ = runIn(t, t.TempDir(), "run", "--retries", "1", "--command", cmd, "go")
	assert.Contains(t, stdout, "── retry 1 of 1 in 50ms (the runtime's retry-after): rate limited by the provider (HTTP 429); retryable, after 50ms")
	assert.Contains(t, stdout, "── failure: rate limited by the provider (HTTP 429); retryable, after 50ms")
}

// TestRunRetrySaysFreshOrResumed: a retry whose process is gone replaces
// the runtime under the same session and says whether the history was
// kept: the reference agent cannot resume, so the retry runs fresh, in
// --json (retry_replaced, the session_replaced event) and on a terminal
// (docs/behaviour.md#fleet).
func TestRunRetrySaysFreshOrResumed(t *testing.T) {
	t.Parallel()
	stdout, stderr, code := runIn(t, t.TempDir(), "run", "--json", "--retries", "1", "#crash")
	assert.Equal(t, 1, code, stderr)
	var rep map[string]any
	events := 0
	for _, l := range strings.Split(stdout, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) != nil {
			continue
		}
		switch m["type"] {
		case "retry_replaced":
			rep = m
		case "session_replaced":
			events++
		}
	}
	require.NotNil(t, rep, stdout)
	assert.Equal(t, false, rep["resumed"])
	assert.EqualValues(t, 1, rep["attempt"])
	assert.NotEmpty(t, rep["reason"])
	assert.Equal(t, 1, events, "the session_replaced event")

	stdout, _, _ = runIn(t, t.TempDir(), "run", "--retries", "1", "#crash")
	assert.Contains(t, stdout, "── fresh: the session could not be resumed and runs as a new session on a new process, without its earlier turns: ")
}
