//go:build interop

package interop

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// Spent usage windows and the runtime's own retries read from Claude
// Code's transcript (docs/behaviour.md#usage-windows,
// docs/behaviour.md#runtime-retrying), against a fake Anthropic server
// sending the unified rate-limit headers of a spent window.

// windowReply is a 429 of a spent five-hour window that resets at reset.
func windowReply(reset time.Time, retryAfter string) fakes.Reply {
	h := http.Header{
		"Anthropic-Ratelimit-Unified-Status":               {"rejected"},
		"Anthropic-Ratelimit-Unified-Reset":                {strconv.FormatInt(reset.Unix(), 10)},
		"Anthropic-Ratelimit-Unified-Representative-Claim": {"five_hour"},
		"Anthropic-Ratelimit-Unified-5h-Status":            {"rejected"},
		"Anthropic-Ratelimit-Unified-5h-Reset":             {strconv.FormatInt(reset.Unix(), 10)},
	}
	if retryAfter != "" {
		h.Set("Retry-After", retryAfter)
	}
	return fakes.Reply{Status: 429, ErrorMessage: "This request would exceed your account's rate limit. Please try again later.", Header: h}
}

// transcriptOf logs the session's transcript, for docs/runtimes.md.
func transcriptOf(t *testing.T, r *rig) {
	matches, _ := filepath.Glob(filepath.Join(r.home, ".claude", "projects", "*", "*.jsonl"))
	for _, m := range matches {
		b, _ := os.ReadFile(m)
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, `"api_error"`) {
				t.Logf("transcript: %s", l)
			}
		}
	}
}

// TestFailuresClaudeUsageWindow: under a subscription credential
// (CLAUDE_CODE_OAUTH_TOKEN) both generations end the turn at once with
// "You've hit your … limit · resets <time> (<zone>)": quota_exhausted,
// retryable after the reset, retry_after to it (the text's minute).
func TestFailuresClaudeUsageWindow(t *testing.T) {
	t.Parallel()
	for _, row := range []string{"claude-current", "claude"} {
		t.Run(row, func(t *testing.T) {
			t.Parallel()
			r, srv := claudeRigOf(t, row)
			// A subscription credential must not send the runtime to any
			// other host: the row runs in a namespace of its own.
			r.offline()
			r.setenv("ANTHROPIC_API_KEY", "")
			r.setenv("CLAUDE_CODE_OAUTH_TOKEN", "fake-oauth-token")
			r.setenv("CLAUDE_CODE_MAX_RETRIES", "2")
			r.setenv("TZ", "UTC")
			reset := time.Now().Add(time.Hour)
			srv.SetFallback(windowReply(reset, ""))
			sess := r.mustStart(func(o *app.Options) { o.Settings.TurnTimeout = 150 * time.Second })
			t0 := time.Now()
			res := r.turn(sess, "say hello")
			failureEvidence(t, r, res, time.Since(t0), srv)
			require.NotEqual(t, domain.OutcomeCompleted, res.Outcome)
			require.NotNil(t, res.Failure)
			assert.Equal(t, domain.FailureQuotaExhausted, res.Failure.Class, res.Failure.Evidence)
			assert.True(t, res.Retryable(), "after the reset")
			// The text names the reset to the minute.
			assert.Greater(t, res.Failure.RetryAfter, 58*time.Minute)
			assert.LessOrEqual(t, res.Failure.RetryAfter, time.Hour+time.Minute)
		})
	}
}

// TestFailuresClaudeJournal: under an API key the Claude adapter 0.101.0
// retries a spent window like any 429 and its transcript's api_error
// records carry the window and its reset; with the transcript source
// armed each is a runtime_retrying event and the rate limit it gives up
// on is quota_exhausted with retry_after to the reset. 0.23.1's records
// carry the status only.
func TestFailuresClaudeJournal(t *testing.T) {
	t.Parallel()
	for _, row := range []string{"claude-current", "claude"} {
		t.Run(row, func(t *testing.T) {
			t.Parallel()
			r, srv := claudeRigOf(t, row)
			r.setenv("CLAUDE_CODE_MAX_RETRIES", "2")
			reset := time.Now().Add(time.Hour)
			srv.SetFallback(windowReply(reset, "1"))
			sess := r.mustStart(claudeMeasured(r), func(o *app.Options) { o.Settings.TurnTimeout = 150 * time.Second })
			t0 := time.Now()
			res := r.turn(sess, "say hello")
			failureEvidence(t, r, res, time.Since(t0), srv)
			transcriptOf(t, r)
			require.NotNil(t, res.Failure)
			retries := r.rec.OfType(domain.EventRuntimeRetrying)
			if row == "claude" {
				// 0.23.1 keeps no api_error record in its transcript
				// (measured): the wire's 429 decides.
				t.Logf("runtime_retrying events: %d", len(retries))
				assert.Equal(t, domain.FailureRateLimited, res.Failure.Class, res.Failure.Evidence)
				return
			}
			require.NotEmpty(t, retries, "the transcript's api_error records")
			for _, ev := range retries {
				assert.Equal(t, 429, ev.Retry.ProviderStatus, ev.Message)
			}
			assert.Equal(t, domain.FailureQuotaExhausted, res.Failure.Class, res.Failure.Evidence)
			assert.True(t, res.Retryable())
			assert.InDelta(t, time.Until(reset).Seconds(), res.Failure.RetryAfter.Seconds(), 120)
		})
	}
}

// TestFailuresClaudeRetryingPastTheBound: a 429 asking for 17 s, and a
// 401, are retried by the Claude adapter 0.101.0 for longer than a 10 s
// turn bound; the turn ends turn_timeout with the class of what its
// transcript says it was retrying (0.23.1 keeps no such record).
func TestFailuresClaudeRetryingPastTheBound(t *testing.T) {
	t.Parallel()
	for _, row := range []struct {
		name      string
		reply     fakes.Reply
		class     domain.FailureClass
		status    int
		retryable bool
	}{
		{"429", fakes.Reply{Status: 429, ErrorMessage: "Number of request tokens has exceeded your per-minute rate limit", Header: http.Header{"Retry-After": {"17"}}},
			domain.FailureRateLimited, 429, true},
		{"401", fakes.Reply{Status: 401, ErrorMessage: "invalid x-api-key"}, domain.FailureAuthFailed, 401, false},
	} {
		t.Run("claude-current/"+row.name, func(t *testing.T) {
			t.Parallel()
			r, srv := claudeRigOf(t, "claude-current")
			srv.SetFallback(row.reply)
			sess := r.mustStart(claudeMeasured(r), func(o *app.Options) { o.Settings.TurnTimeout = 10 * time.Second })
			t0 := time.Now()
			res := r.turn(sess, "say hello")
			failureEvidence(t, r, res, time.Since(t0), srv)
			transcriptOf(t, r)
			require.NotNil(t, res.Err)
			require.Equal(t, domain.KindTurnTimeout, res.Err.Kind, res.Message())
			require.NotNil(t, res.Failure)
			assert.Equal(t, row.class, res.Failure.Class, res.Failure.Evidence)
			assert.Equal(t, row.status, res.Failure.ProviderStatus)
			assert.Equal(t, row.retryable, res.Retryable())
		})
	}
}

// TestFailuresClaudeJournalCLI: `acpdrive run --json`, which arms the
// Claude transcript source itself, prints the transcript's retries as
// runtime_retrying lines and the spent window on turn_result.
func TestFailuresClaudeJournalCLI(t *testing.T) {
	t.Parallel()
	r, srv := claudeRigOf(t, "claude-current")
	r.setenv("CLAUDE_CODE_MAX_RETRIES", "2")
	r.measure = true
	reset := time.Now().Add(time.Hour)
	srv.SetFallback(windowReply(reset, "1"))
	args := append(append([]string{"run", "--json"}, r.launchFlags()...), "say hello")
	stdout, stderr, code := r.acpdrive(args...)
	require.Equal(t, 1, code, stderr)
	var retrying int
	var result struct {
		Failure struct {
			Class        string `json:"class"`
			Retryable    bool   `json:"retryable"`
			RetryAfterMS int64  `json:"retry_after_ms"`
		} `json:"failure"`
	}
	for _, l := range strings.Split(stdout, "\n") {
		switch {
		case strings.Contains(l, `"type":"runtime_retrying"`):
			retrying++
		case strings.Contains(l, `"type":"turn_result"`):
			require.NoError(t, json.Unmarshal([]byte(l), &result))
		}
	}
	assert.Positive(t, retrying, stdout)
	assert.Equal(t, "quota_exhausted", result.Failure.Class, stdout)
	assert.True(t, result.Failure.Retryable)
	assert.InDelta(t, time.Until(reset).Seconds(), float64(result.Failure.RetryAfterMS)/1000, 120)
}
