package app

import (
	"time"

	"github.com/acpdrive/acpdrive/domain"
)

// providerWait is the wait the failed turn's failure itself asks for
// (docs/behaviour.md#retrying): the provider's retry_after the runtime
// exposed, or a spent usage window's reset (docs/behaviour.md#usage-windows).
// It is never shortened — not by the back-off's cap, not by a retry
// that would come sooner — so a window is never retried before it resets;
// RetryPolicy.MaxWait, the longest the policy waits in all, decides whether
// the wait is taken. ok is false when the failure names no wait.
func providerWait(res domain.TurnResult) (wait time.Duration, ok bool) {
	if res.Failure == nil || res.Failure.RetryAfter <= 0 {
		return 0, false
	}
	return res.Failure.RetryAfter, true
}
