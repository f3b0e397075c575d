package domain

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// googleReasons are google.rpc.ErrorInfo reasons that name a class
// (docs/behaviour.md#failures): the credential reasons auth_failed, the
// billing ones quota_exhausted, the rate ones rate_limited.
var googleReasons = map[string]FailureClass{
	"API_KEY_INVALID":                 FailureAuthFailed,
	"API_KEY_EXPIRED":                 FailureAuthFailed,
	"API_KEY_SERVICE_BLOCKED":         FailureAuthFailed,
	"API_KEY_HTTP_REFERRER_BLOCKED":   FailureAuthFailed,
	"API_KEY_IP_ADDRESS_BLOCKED":      FailureAuthFailed,
	"API_KEY_ANDROID_APP_BLOCKED":     FailureAuthFailed,
	"API_KEY_IOS_APP_BLOCKED":         FailureAuthFailed,
	"ACCESS_TOKEN_EXPIRED":            FailureAuthFailed,
	"ACCESS_TOKEN_TYPE_UNSUPPORTED":   FailureAuthFailed,
	"ACCESS_TOKEN_SCOPE_INSUFFICIENT": FailureAuthFailed,
	"CREDENTIALS_MISSING":             FailureAuthFailed,
	"CONSUMER_INVALID":                FailureAuthFailed,
	"SERVICE_DISABLED":                FailureAuthFailed,
	"USER_PROJECT_DENIED":             FailureAuthFailed,
	"BILLING_DISABLED":                FailureQuotaExhausted,
	"RESOURCE_PROJECT_INVALID":        FailureAuthFailed,
	"RATE_LIMIT_EXCEEDED":             FailureRateLimited,
}

// GoogleError is what a Google API error body ({"error":{"code",
// "message","status","details"}}, AIP-193) carries beyond its status: the
// google.rpc.ErrorInfo reasons, the google.rpc.QuotaFailure quota ids and
// the google.rpc.RetryInfo delay.
type GoogleError struct {
	// Code is the body's HTTP status; zero when absent.
	Code int
	// Status is the body's canonical code ("INVALID_ARGUMENT").
	Status string
	// Message is the body's message.
	Message string
	// Reasons are the ErrorInfo details' reasons, in order.
	Reasons []string
	// QuotaIDs are the QuotaFailure details' violated quota ids.
	QuotaIDs []string
	// RetryDelay is the RetryInfo detail's delay; zero when absent.
	RetryDelay time.Duration
}

// googleDetail is one entry of a body's details.
type googleDetail struct {
	Type       string `json:"@type"`
	Reason     string `json:"reason"`
	RetryDelay string `json:"retryDelay"`
	Violations []struct {
		QuotaID     string `json:"quotaId"`
		QuotaMetric string `json:"quotaMetric"`
	} `json:"violations"`
}

// ParseGoogleError reads a Google API error body, whole: an object
// {"error":{…}}, or an array whose first element is one (the streaming
// endpoints' form). ok is false for anything else, or for a body with no
// status, no canonical code and no details.
func ParseGoogleError(text string) (GoogleError, bool) {
	b := []byte(strings.TrimSpace(text))
	if len(b) > 0 && b[0] == '[' {
		var arr []json.RawMessage
		if json.Unmarshal(b, &arr) != nil || len(arr) == 0 {
			return GoogleError{}, false
		}
		b = arr[0]
	}
	var body struct {
		Error *struct {
			Code    int            `json:"code"`
			Message string         `json:"message"`
			Status  string         `json:"status"`
			Details []googleDetail `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &body) != nil || body.Error == nil {
		return GoogleError{}, false
	}
	e := body.Error
	if e.Status == "" && len(e.Details) == 0 {
		return GoogleError{}, false
	}
	g := GoogleError{Code: e.Code, Status: e.Status, Message: e.Message}
	for _, d := range e.Details {
		switch d.Type[strings.LastIndex(d.Type, "/")+1:] {
		case "google.rpc.ErrorInfo":
			if d.Reason != "" {
				g.Reasons = append(g.Reasons, d.Reason)
			}
		case "google.rpc.QuotaFailure":
			for _, v := range d.Violations {
				g.QuotaIDs = append(g.QuotaIDs, v.QuotaID)
			}
		case "google.rpc.RetryInfo":
			g.RetryDelay = protoDuration(d.RetryDelay)
		}
	}
	return g, true
}

// protoDuration reads a google.protobuf.Duration's JSON form ("17s",
// "0.5s"); zero when it is not one.
func protoDuration(s string) time.Duration {
	num, ok := strings.CutSuffix(strings.TrimSpace(s), "s")
	if !ok {
		return 0
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f <= 0 {
		return 0
	}
	return time.Duration(f * float64(time.Second))
}

// Class is the class the body's details name: an ErrorInfo reason of the
// table (API_KEY_INVALID and the other credential reasons auth_failed),
// else a QuotaFailure whose quota id is a daily or longer one
// quota_exhausted and another one rate_limited. ok is false when the
// details name none (the status then decides).
func (g GoogleError) Class() (c FailureClass, evidence string, ok bool) {
	for _, r := range g.Reasons {
		if c, found := googleReasons[r]; found {
			return c, "google.rpc.ErrorInfo reason " + r, true
		}
	}
	for _, id := range g.QuotaIDs {
		if longQuota(id) {
			return FailureQuotaExhausted, "google.rpc.QuotaFailure quota " + id, true
		}
	}
	if len(g.QuotaIDs) > 0 {
		return FailureRateLimited, "google.rpc.QuotaFailure quota " + g.QuotaIDs[0], true
	}
	return "", "", false
}

// longQuota reports whether a quota id names a window a retry soon cannot
// outwait (per day, or no window at all: a plan's limit).
func longQuota(id string) bool {
	for _, w := range []string{"PerMinute", "PerSecond", "PerHour"} {
		if strings.Contains(id, w) {
			return false
		}
	}
	return id != ""
}
