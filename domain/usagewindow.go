package domain

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// ResetClock is the reset time of a usage window as a runtime wrote it:
// a clock time, with or without a date, in a named zone
// (docs/behaviour.md#usage-windows).
type ResetClock struct {
	// Year, Month and Day are the date when the text gave one; Month zero
	// when it gave none, Year zero when it gave no year.
	Year, Month, Day int
	// Hour (0–23) and Minute are the clock time.
	Hour, Minute int
	// Zone is the zone as named ("UTC", "Europe/Berlin"); "" when none was.
	Zone string
}

var (
	// "5:32pm", "5pm", "Dec 9, 5pm", "Jan 2, 2027, 5:32pm", each with an
	// optional " (Zone)".
	resetClock12 = regexp.MustCompile(`^(?:([A-Z][a-z]{2}) (\d{1,2}),(?: (\d{4}),)? )?(\d{1,2})(?::(\d{2}))? ?([ap]m)(?: \(([^()\s]+)\))?$`)
	// "2026-08-08 00:00 UTC", "2026-08-08 00:00 (UTC)", "2026-08-08".
	resetClockISO = regexp.MustCompile(`^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2}))?(?: \(?([^()\s]+)\)?)?$`)
	months        = map[string]int{"Jan": 1, "Feb": 2, "Mar": 3, "Apr": 4, "May": 5, "Jun": 6,
		"Jul": 7, "Aug": 8, "Sep": 9, "Oct": 10, "Nov": 11, "Dec": 12}
)

// ParseResetClock reads a reset time as Claude Code writes it: "5:32pm
// (UTC)", "5pm (Europe/Berlin)", "Dec 9, 5pm (UTC)", "Jan 2, 2027, 5:32pm
// (UTC)", "2026-08-08 00:00 UTC". ok is false for anything else.
func ParseResetClock(s string) (ResetClock, bool) {
	s = strings.TrimSpace(s)
	if m := resetClock12.FindStringSubmatch(s); m != nil {
		var r ResetClock
		if m[1] != "" {
			mo, known := months[m[1]]
			if !known {
				return ResetClock{}, false
			}
			r.Month, r.Day = mo, atoi(m[2])
			r.Year = atoi(m[3])
		}
		h := atoi(m[4])
		if h < 1 || h > 12 {
			return ResetClock{}, false
		}
		r.Hour = h % 12
		if m[6] == "pm" {
			r.Hour += 12
		}
		r.Minute, r.Zone = atoi(m[5]), m[7]
		return r, r.Minute < 60
	}
	if m := resetClockISO.FindStringSubmatch(s); m != nil {
		r := ResetClock{Year: atoi(m[1]), Month: atoi(m[2]), Day: atoi(m[3]), Hour: atoi(m[4]), Minute: atoi(m[5]), Zone: m[6]}
		return r, r.Month >= 1 && r.Month <= 12 && r.Hour < 24 && r.Minute < 60
	}
	return ResetClock{}, false
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// At is the instant of the reset seen from now, in loc (the zone the
// text named, resolved by the caller; nil: now's own zone): a clock time
// without a date is its next occurrence after now; a date without a year
// is the next one of that day.
func (r ResetClock) At(now time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = now.Location()
	}
	local := now.In(loc)
	if r.Month == 0 {
		t := time.Date(local.Year(), local.Month(), local.Day(), r.Hour, r.Minute, 0, 0, loc)
		if !t.After(now) {
			t = time.Date(local.Year(), local.Month(), local.Day()+1, r.Hour, r.Minute, 0, 0, loc)
		}
		return t
	}
	if r.Year != 0 {
		return time.Date(r.Year, time.Month(r.Month), r.Day, r.Hour, r.Minute, 0, 0, loc)
	}
	t := time.Date(local.Year(), time.Month(r.Month), r.Day, r.Hour, r.Minute, 0, 0, loc)
	if !t.After(now) {
		t = time.Date(local.Year()+1, time.Month(r.Month), r.Day, r.Hour, r.Minute, 0, 0, loc)
	}
	return t
}

// ZoneResolver finds a zone by name (time.LoadLocation); the domain reads
// no zone database itself.
type ZoneResolver func(name string) (*time.Location, error)

// resolve is the zone named, UTC for "UTC" or "GMT" without asking, and
// nil when the name is empty or unknown.
func (z ZoneResolver) resolve(name string) (*time.Location, bool) {
	switch name {
	case "":
		return nil, true
	case "UTC", "GMT", "Etc/UTC":
		return time.UTC, true
	}
	if z == nil {
		return nil, false
	}
	loc, err := z(name)
	if err != nil {
		return nil, false
	}
	return loc, true
}

// UsageWindowFailure is the failure of a spent usage window whose reset
// is known (docs/behaviour.md#usage-windows): quota_exhausted, retryable
// only after the reset, which RetryAfter measures from now. A reset not
// after now leaves the window's class without a wait, not retryable.
func UsageWindowFailure(reset, now time.Time, status int, evidence string) Failure {
	f := newFailure(FailureQuotaExhausted, status, evidence)
	if wait := reset.Sub(now); wait > 0 {
		f.Retryable = true
		f.RetryAfter = wait.Round(time.Millisecond)
		f.Evidence += fmt.Sprintf("; resets at %s", reset.UTC().Format(time.RFC3339))
	}
	return f
}

// classifyUsageWindow matches msg against the vocabulary's usage-window
// texts; the text's "reset" group, read with ParseResetClock, gives the
// wait when the zone it names resolves.
func (v FailureVocabulary) classifyUsageWindow(msg string, status int, now time.Time, zones ZoneResolver) (Failure, bool) {
	for _, t := range v.UsageWindows {
		m := t.Pattern.FindStringSubmatch(msg)
		if m == nil {
			continue
		}
		evidence := t.Source + " text " + strconv.Quote(TruncateRunes(msg, 120))
		i := t.Pattern.SubexpIndex("reset")
		if i < 0 || m[i] == "" || now.IsZero() {
			return newFailure(FailureQuotaExhausted, status, evidence), true
		}
		rc, ok := ParseResetClock(m[i])
		if !ok {
			return newFailure(FailureQuotaExhausted, status, evidence), true
		}
		loc, ok := zones.resolve(rc.Zone)
		if !ok {
			return newFailure(FailureQuotaExhausted, status, evidence+"; the reset's zone "+strconv.Quote(rc.Zone)+" is unknown"), true
		}
		return UsageWindowFailure(rc.At(now, loc), now, status, evidence), true
	}
	return Failure{}, false
}
