package domain_test

import (
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
)

func TestParseResetClock(t *testing.T) {
	cases := []struct {
		text string
		want domain.ResetClock
		ok   bool
	}{
		{"5:32pm (UTC)", domain.ResetClock{Hour: 17, Minute: 32, Zone: "UTC"}, true},
		{"5pm (Europe/Berlin)", domain.ResetClock{Hour: 17, Zone: "Europe/Berlin"}, true},
		{"12am (UTC)", domain.ResetClock{Hour: 0, Zone: "UTC"}, true},
		{"12:05pm", domain.ResetClock{Hour: 12, Minute: 5}, true},
		{"Dec 9, 5pm (UTC)", domain.ResetClock{Month: 12, Day: 9, Hour: 17, Zone: "UTC"}, true},
		{"Jan 2, 2027, 5:32am (UTC)", domain.ResetClock{Year: 2027, Month: 1, Day: 2, Hour: 5, Minute: 32, Zone: "UTC"}, true},
		{"2026-08-08 00:00 UTC", domain.ResetClock{Year: 2026, Month: 8, Day: 8, Zone: "UTC"}, true},
		{"2026-08-08", domain.ResetClock{Year: 2026, Month: 8, Day: 8}, true},
		{"13pm (UTC)", domain.ResetClock{}, false},
		{"in 3m", domain.ResetClock{}, false},
		{"soon", domain.ResetClock{}, false},
	}
	for _, c := range cases {
		t.Run(c.text, func(t *testing.T) {
			got, ok := domain.ParseResetClock(c.text)
			require.Equal(t, c.ok, ok)
			assert.Equal(t, c.want, got)
		})
	}
}

func TestResetClockAt(t *testing.T) {
	berlin := time.FixedZone("CET", 3600)
	now := time.Date(2026, 12, 7, 21, 12, 0, 0, time.UTC)
	cases := []struct {
		name string
		rc   domain.ResetClock
		loc  *time.Location
		want time.Time
	}{
		{"later today", domain.ResetClock{Hour: 23, Minute: 5}, time.UTC, time.Date(2026, 12, 7, 23, 5, 0, 0, time.UTC)},
		{"a clock time passed today is tomorrow's", domain.ResetClock{Hour: 17, Minute: 32}, time.UTC, time.Date(2026, 12, 8, 17, 32, 0, 0, time.UTC)},
		{"exactly now is tomorrow's", domain.ResetClock{Hour: 21, Minute: 12}, time.UTC, time.Date(2026, 12, 8, 21, 12, 0, 0, time.UTC)},
		{"in the zone named", domain.ResetClock{Hour: 22, Minute: 30}, berlin, time.Date(2026, 12, 7, 21, 30, 0, 0, time.UTC)},
		{"the zone's day", domain.ResetClock{Hour: 0, Minute: 30}, berlin, time.Date(2026, 12, 7, 23, 30, 0, 0, time.UTC)},
		{"a date without a year", domain.ResetClock{Month: 12, Day: 9, Hour: 17}, time.UTC, time.Date(2026, 12, 9, 17, 0, 0, 0, time.UTC)},
		{"a past date without a year is next year's", domain.ResetClock{Month: 1, Day: 2, Hour: 5}, time.UTC, time.Date(2027, 1, 2, 5, 0, 0, 0, time.UTC)},
		{"a full date", domain.ResetClock{Year: 2027, Month: 8, Day: 8}, time.UTC, time.Date(2027, 8, 8, 0, 0, 0, 0, time.UTC)},
		{"no zone: now's", domain.ResetClock{Hour: 23}, nil, time.Date(2026, 12, 7, 23, 0, 0, 0, time.UTC)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.True(t, c.want.Equal(c.rc.At(now, c.loc)), "got %s", c.rc.At(now, c.loc))
		})
	}
}

// windows is a vocabulary of an imaginary runtime whose spent window is
// also an errorKind rate_limit: the window is read first.
var windows = domain.FailureVocabulary{
	DataKinds: map[string]map[string]domain.FailureClass{"errorKind": {"rate_limit": domain.FailureRateLimited}},
	UsageWindows: []domain.FailureText{
		{Pattern: regexp.MustCompile(`^Out of window · resets (?P<reset>[^·\n]+)$`), Class: domain.FailureQuotaExhausted, Source: "acme"},
		{Pattern: regexp.MustCompile(`^Out of window\.$`), Class: domain.FailureQuotaExhausted, Source: "acme"},
	},
}

func TestVocabularyUsageWindow(t *testing.T) {
	now := time.Date(2026, 12, 7, 17, 0, 0, 0, time.UTC)
	zones := func(name string) (*time.Location, error) {
		if name == "Europe/Berlin" {
			return time.FixedZone("CET", 3600), nil
		}
		return nil, errors.New("unknown zone")
	}
	cases := []struct {
		name      string
		msg       string
		now       time.Time
		retryable bool
		after     time.Duration
	}{
		{"a reset today", "Internal error: Out of window · resets 5:32pm (UTC)", now, true, 32 * time.Minute},
		{"a reset in a named zone", "Out of window · resets 7pm (Europe/Berlin)", now, true, time.Hour},
		{"a dated reset", "Out of window · resets 2026-12-08 00:00 UTC", now, true, 7 * time.Hour},
		{"a zone not known", "Out of window · resets 7pm (Mars/Olympus)", now, false, 0},
		{"a reset passed", "Out of window · resets 2026-12-07 16:00 UTC", now, false, 0},
		{"no reset", "Out of window.", now, false, 0},
		{"no clock", "Out of window · resets 5:32pm (UTC)", time.Time{}, false, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := windows.ClassifyRPCErrorAt(domain.RPCError{Code: -32603, Message: c.msg, Data: []byte(`{"errorKind":"rate_limit"}`)}, c.now, zones)
			assert.Equal(t, domain.FailureQuotaExhausted, f.Class, f.Evidence)
			assert.Equal(t, c.retryable, f.Retryable)
			assert.Equal(t, c.after, f.RetryAfter)
		})
	}
	f := windows.ClassifyRPCErrorAt(domain.RPCError{Code: -32603, Message: "I am Out of window · resets 5pm", Data: []byte(`{"errorKind":"rate_limit"}`)}, now, zones)
	assert.Equal(t, domain.FailureRateLimited, f.Class, "prose is never a window")
}

func TestUsageWindowFailureJSON(t *testing.T) {
	now := time.Date(2026, 12, 7, 17, 0, 0, 0, time.UTC)
	f := domain.UsageWindowFailure(now.Add(32*time.Minute), now, 429, "e")
	assert.Equal(t, domain.Failure{Class: domain.FailureQuotaExhausted, Retryable: true, RetryAfter: 32 * time.Minute,
		ProviderStatus: 429, Evidence: "e; resets at 2026-12-07T17:32:00Z"}, f)
}
