package domain_test

import (
	"fmt"
	"regexp"
	"time"

	"github.com/acpdrive/acpdrive/domain"
)

// A reset written as a clock time without a date is its next occurrence
// in the zone named.
func ExampleParseResetClock() {
	rc, ok := domain.ParseResetClock("5:32pm (UTC)")
	now := time.Date(2026, 12, 7, 21, 0, 0, 0, time.UTC)
	fmt.Println(ok, rc.At(now, time.UTC))
	// Output: true 2026-12-08 17:32:00 +0000 UTC
}

// A Google API error body's ErrorInfo reason names the class its status
// does not.
func ExampleParseGoogleError() {
	g, _ := domain.ParseGoogleError(`{"error":{"code":400,"message":"API key expired. Please renew the API key.","status":"INVALID_ARGUMENT",` +
		`"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID"}]}}`)
	class, evidence, _ := g.Class()
	fmt.Println(class, class.Retryable(), evidence)
	// Output: auth_failed false google.rpc.ErrorInfo reason API_KEY_INVALID
}

// A spent usage window is quota_exhausted, retryable after its reset.
func ExampleFailureVocabulary_ClassifyRPCErrorAt() {
	v := domain.FailureVocabulary{UsageWindows: []domain.FailureText{{
		Pattern: regexp.MustCompile(`^You've hit your [^\n]*? · resets (?P<reset>[^·\n]+)$`), Class: domain.FailureQuotaExhausted, Source: "Claude Code"}}}
	now := time.Date(2026, 12, 7, 17, 0, 0, 0, time.UTC)
	f := v.ClassifyRPCErrorAt(domain.RPCError{Code: -32603, Message: "Internal error: You've hit your 5-hour limit · resets 5:32pm (UTC)"}, now, time.LoadLocation)
	fmt.Println(f.Class, f.Retryable, f.RetryAfter)
	// Output: quota_exhausted true 32m0s
}
