package main_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunShowsEachFailureClass: the built-in agent's named provider
// failures, run as a person would (`acpdrive run --json "#failure-…"`),
// end with their class, retryability and retry_after_ms on turn_result
// (docs/reference-agent.md#provider-failures).
func TestRunShowsEachFailureClass(t *testing.T) {
	t.Parallel()
	cases := []struct {
		turn      string
		class     string
		retryable bool
		status    int
		afterMS   int64 // -1: a reset in the next 24 h
	}{
		{"#failure-rate-limit", "rate_limited", true, 429, 17000},
		{"#failure-overloaded", "overloaded", true, 529, 0},
		{"#failure-quota", "quota_exhausted", false, 0, 0},
		{"#failure-credentials", "auth_failed", false, 400, 0},
		{"#failure-context-overflow", "context_overflow", false, 0, 0},
		{"#failure-usage-window", "quota_exhausted", true, 0, -1},
	}
	for _, c := range cases {
		t.Run(c.turn, func(t *testing.T) {
			t.Parallel()
			stdout, stderr, code := runIn(t, t.TempDir(), "run", "--json", c.turn)
			assert.Equal(t, 1, code, stderr)
			var res struct {
				Outcome   string `json:"outcome"`
				Retryable *bool  `json:"retryable"`
				Failure   struct {
					Class          string `json:"class"`
					Retryable      bool   `json:"retryable"`
					RetryAfterMS   int64  `json:"retry_after_ms"`
					ProviderStatus int    `json:"provider_status"`
				} `json:"failure"`
			}
			for _, l := range strings.Split(stdout, "\n") {
				if strings.Contains(l, `"type":"turn_result"`) {
					require.NoError(t, json.Unmarshal([]byte(l), &res))
				}
			}
			assert.Equal(t, "turn_failed", res.Outcome, stdout)
			assert.Equal(t, c.class, res.Failure.Class)
			assert.Equal(t, c.retryable, res.Failure.Retryable)
			require.NotNil(t, res.Retryable)
			assert.Equal(t, c.retryable, *res.Retryable)
			assert.Equal(t, c.status, res.Failure.ProviderStatus)
			if c.afterMS >= 0 {
				assert.Equal(t, c.afterMS, res.Failure.RetryAfterMS)
			} else {
				assert.Positive(t, res.Failure.RetryAfterMS)
				assert.LessOrEqual(t, res.Failure.RetryAfterMS, (24 * time.Hour).Milliseconds())
			}
		})
	}
}
