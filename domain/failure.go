package domain

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// FailureClass names the provider failure behind a turn that did not
// complete (docs/behaviour.md#failures). Its values are contract strings.
type FailureClass string

// Failure classes (docs/behaviour.md#failures).
const (
	// FailureRateLimited: the provider limited the request rate (HTTP
	// 429); retry after the limit resets.
	FailureRateLimited FailureClass = "rate_limited"
	// FailureOverloaded: the provider's side is overloaded or failing
	// (HTTP 5xx, Anthropic 529); retry soon.
	FailureOverloaded FailureClass = "overloaded"
	// FailureQuotaExhausted: the account's quota, credit or usage limit is
	// spent; a retry cannot help until a person acts, or, for a usage
	// window with a known reset, until it resets (UsageWindowFailure:
	// Failure.Retryable true, RetryAfter the wait).
	FailureQuotaExhausted FailureClass = "quota_exhausted"
	// FailureAuthFailed: the credential is missing, invalid or expired; a
	// retry cannot help until a person acts.
	FailureAuthFailed FailureClass = "auth_failed"
	// FailureContextOverflow: the conversation outgrew the model's context
	// window; a retry on the same session cannot help, a fresh session can.
	FailureContextOverflow FailureClass = "context_overflow"
	// FailureStreamDropped: the model's stream or the connection to the
	// provider dropped mid-turn; retry.
	FailureStreamDropped FailureClass = "stream_dropped"
	// FailureUnknown: nothing the runtime sent names a provider failure.
	FailureUnknown FailureClass = "unknown"
)

// Retryable reports whether a failure of this class may be retried: quota,
// credentials and context overflow may not; unknown may (its error kind
// decides, see TurnResult.Retryable).
func (c FailureClass) Retryable() bool {
	switch c {
	case FailureQuotaExhausted, FailureAuthFailed, FailureContextOverflow:
		return false
	default:
		return true
	}
}

// Failure is the class of a turn that did not complete, with what decided
// it (docs/behaviour.md#failures).
type Failure struct {
	// Class is the failure's class.
	Class FailureClass
	// Retryable reports whether retrying the turn can help: the class's
	// rule, and for FailureUnknown the error kind's.
	Retryable bool
	// RetryAfter is the wait the runtime said the provider asked for; zero
	// when the runtime does not expose one (never invented).
	RetryAfter time.Duration
	// ProviderStatus is the provider's HTTP status when the runtime sent
	// it; zero otherwise.
	ProviderStatus int
	// Evidence says what decided the class, in a few words quoting the
	// runtime (an error code, a data field, a documented text).
	Evidence string
}

// failureJSON is the wire shape of a Failure in --json output.
type failureJSON struct {
	Class          FailureClass `json:"class"`
	Retryable      bool         `json:"retryable"`
	RetryAfterMS   int64        `json:"retry_after_ms,omitempty"`
	ProviderStatus int          `json:"provider_status,omitempty"`
	Evidence       string       `json:"evidence"`
}

// MarshalJSON renders {"class","retryable","retry_after_ms"?,
// "provider_status"?,"evidence"} (docs/behaviour.md#failures).
func (f Failure) MarshalJSON() ([]byte, error) {
	return json.Marshal(failureJSON{Class: f.Class, Retryable: f.Retryable,
		RetryAfterMS: f.RetryAfter.Milliseconds(), ProviderStatus: f.ProviderStatus, Evidence: f.Evidence})
}

// UnmarshalJSON reads the shape MarshalJSON writes.
func (f *Failure) UnmarshalJSON(b []byte) error {
	var j failureJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*f = Failure{Class: j.Class, Retryable: j.Retryable, RetryAfter: time.Duration(j.RetryAfterMS) * time.Millisecond,
		ProviderStatus: j.ProviderStatus, Evidence: j.Evidence}
	return nil
}

// Text is the one line a person reads, for example "rate limited by the
// provider (HTTP 429); retryable, after 17s".
func (f Failure) Text() string {
	var b strings.Builder
	b.WriteString(failureWords[f.Class])
	if b.Len() == 0 {
		b.WriteString(string(f.Class))
	}
	if f.ProviderStatus != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", f.ProviderStatus)
	}
	if f.Retryable {
		b.WriteString("; retryable")
		if f.RetryAfter > 0 {
			b.WriteString(", after " + f.RetryAfter.String())
		}
	} else {
		b.WriteString("; not retryable")
	}
	if f.Evidence != "" {
		b.WriteString(" — " + f.Evidence)
	}
	return b.String()
}

var failureWords = map[FailureClass]string{
	FailureRateLimited:     "rate limited by the provider",
	FailureOverloaded:      "the provider is overloaded or failing",
	FailureQuotaExhausted:  "the account's quota or credit is exhausted",
	FailureAuthFailed:      "the credential was refused",
	FailureContextOverflow: "the conversation outgrew the context window",
	FailureStreamDropped:   "the model's stream dropped",
	FailureUnknown:         "failure of no known provider class",
}

// newFailure is a failure of class c with the class's retry rule.
func newFailure(c FailureClass, status int, evidence string) Failure {
	return Failure{Class: c, Retryable: c.Retryable(), ProviderStatus: status, Evidence: evidence}
}

// UnknownFailure is the class of a turn nothing classified: retryable as
// kind is (docs/behaviour.md#errors).
func UnknownFailure(kind ErrorKind, evidence string) Failure {
	return Failure{Class: FailureUnknown, Retryable: kind.Retryable(), Evidence: evidence}
}

// ClassOfStatus maps a provider's HTTP status onto a class: 429
// rate_limited, 401 and 403 auth_failed, 402 quota_exhausted, 413
// context_overflow, 500, 502, 503, 504 and 529 overloaded; ok is false
// for any other.
func ClassOfStatus(status int) (c FailureClass, ok bool) {
	switch status {
	case 429:
		return FailureRateLimited, true
	case 401, 403:
		return FailureAuthFailed, true
	case 402:
		return FailureQuotaExhausted, true
	case 413:
		return FailureContextOverflow, true
	case 500, 502, 503, 504, 529:
		return FailureOverloaded, true
	}
	return "", false
}

// RuntimeRetry is a runtime's own retry of a provider failure, as it
// announced it (docs/behaviour.md#failures): the runtime_retrying event.
type RuntimeRetry struct {
	// Class is the failure being retried.
	Class FailureClass `json:"class"`
	// Attempt is the retry's number, when the runtime said it (from 1).
	Attempt int `json:"attempt,omitempty"`
	// MaxAttempts is the runtime's own limit, when it said it.
	MaxAttempts int `json:"max_attempts,omitempty"`
	// WaitMS is the wait before the retry, when the runtime said it.
	WaitMS int64 `json:"wait_ms,omitempty"`
	// ProviderStatus is the provider's HTTP status, when sent.
	ProviderStatus int `json:"provider_status,omitempty"`
	// RetryAfterMS is the wait until a spent usage window resets, when
	// the runtime recorded the reset (docs/behaviour.md#usage-windows).
	RetryAfterMS int64 `json:"retry_after_ms,omitempty"`
	// Evidence is the runtime's own words.
	Evidence string `json:"evidence"`
}

// Text is the one line a person reads.
func (r RuntimeRetry) Text() string {
	s := "the runtime is retrying: " + failureWords[r.Class]
	if r.ProviderStatus != 0 {
		s += fmt.Sprintf(" (HTTP %d)", r.ProviderStatus)
	}
	if r.Attempt > 0 {
		s += fmt.Sprintf(", attempt %d", r.Attempt)
		if r.MaxAttempts > 0 {
			s += fmt.Sprintf(" of %d", r.MaxAttempts)
		}
	}
	if r.WaitMS > 0 {
		s += ", waiting " + (time.Duration(r.WaitMS) * time.Millisecond).String()
	}
	if r.RetryAfterMS > 0 {
		s += ", the limit resets in " + (time.Duration(r.RetryAfterMS) * time.Millisecond).String()
	}
	return s
}

// Failure is the class of a turn that ended while the runtime was
// retrying this failure (its own bound or the caller's passed).
func (r RuntimeRetry) Failure() Failure {
	f := Failure{Class: r.Class, Retryable: r.Class.Retryable(), ProviderStatus: r.ProviderStatus,
		Evidence: "the runtime was retrying when the turn ended: " + TruncateRunes(r.Evidence, 120)}
	if r.RetryAfterMS > 0 {
		// A usage window with its reset: retryable once it resets.
		f.Retryable, f.RetryAfter = true, time.Duration(r.RetryAfterMS)*time.Millisecond
	}
	return f
}
