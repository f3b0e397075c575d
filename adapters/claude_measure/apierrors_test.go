package claude_measure

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// The api_error records in the shapes both generations make
// (testdata/retries-*.jsonl): 0.101.0's serialized error with its status
// and rateLimits, as its transcript keeps them (measured,
// test/interop/failures_window_test.go); 0.23.1's SDK error object (status
// and body; an error without either is a dropped connection), which 0.23.1
// makes but was measured to keep out of its transcript: read if it ever
// is.
func TestTurnRetriesFromTheTranscript(t *testing.T) {
	now := time.Date(2026, 12, 7, 17, 0, 30, 0, time.UTC)
	cases := []struct {
		fixture string
		want    []domain.RuntimeRetry
	}{
		{"retries-0.101.0.jsonl", []domain.RuntimeRetry{
			{Class: domain.FailureRateLimited, Attempt: 1, MaxAttempts: 10, WaitMS: 17000, ProviderStatus: 429,
				Evidence: `Claude Code's transcript: API error 429: 429 {"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute…`},
			{Class: domain.FailureQuotaExhausted, Attempt: 2, MaxAttempts: 10, WaitMS: 34000, ProviderStatus: 429, RetryAfterMS: (31*time.Minute + 30*time.Second).Milliseconds(),
				Evidence: `Claude Code's transcript: API error 429, usage window five_hour resets at 2026-12-07T17:32:00Z: 429 {"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed your account's rate limit."…`},
		}},
		{"retries-0.23.1.jsonl", []domain.RuntimeRetry{
			{Class: domain.FailureOverloaded, Attempt: 1, MaxAttempts: 10, WaitMS: 1100, ProviderStatus: 529, Evidence: "Claude Code's transcript: API error 529: Overloaded"},
			{Class: domain.FailureStreamDropped, Attempt: 2, MaxAttempts: 10, WaitMS: 2300, Evidence: "Claude Code's transcript: API error"},
		}},
	}
	for _, c := range cases {
		t.Run(c.fixture, func(t *testing.T) {
			w := newWorld(t)
			m := w.arm(0)
			m.SessionOpened(sid, false)
			j, ok := m.(ports.RetryJournal)
			require.True(t, ok)
			assert.Empty(t, j.TurnRetries(sid, now), "no transcript yet")
			w.append(fixture(t, "turn1.jsonl"))
			assert.Empty(t, j.TurnRetries(sid, now), "a turn without API errors")
			w.append(fixture(t, c.fixture))
			assert.Equal(t, c.want, j.TurnRetries(sid, now))
		})
	}
}

// TestTurnRetriesAreTheRunningTurns: records of an earlier prompt, and of
// a turn TurnUsage settled, are not the running turn's.
func TestTurnRetriesAreTheRunningTurns(t *testing.T) {
	now := time.Date(2026, 12, 7, 17, 0, 30, 0, time.UTC)
	w := newWorld(t)
	m := w.arm(0)
	m.SessionOpened(sid, false)
	j := m.(ports.RetryJournal)
	w.append(fixture(t, "retries-0.23.1.jsonl"))
	w.append(fixture(t, "turn1.jsonl"))
	assert.Empty(t, j.TurnRetries(sid, now), "the retries were the earlier prompt's")

	w.append(fixture(t, "retries-0.23.1.jsonl"))
	require.Len(t, j.TurnRetries(sid, now), 2)
	_, _, _, err := turnNow(m)
	require.NoError(t, err)
	w.append(fixture(t, "turn2.jsonl"))
	assert.Empty(t, j.TurnRetries(sid, now), "the next turn has none")
	assert.Empty(t, j.TurnRetries("not a session id", now))
}
