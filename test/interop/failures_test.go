//go:build interop

package interop

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// The provider failures fleets live in (docs/behaviour.md#failures),
// against fake model servers answering the providers' documented error
// shapes on every call: each turn ends with its class, never
// turn_completed. docs/runtimes.md records what each runtime does.

// failureShape is one provider failure as a fake server answers it.
type failureShape struct {
	name  string
	reply fakes.Reply
	class domain.FailureClass
}

// anthropicFailures are the Anthropic API's documented error shapes.
var anthropicFailures = []failureShape{
	{"429", fakes.Reply{Status: 429, ErrorMessage: "Number of request tokens has exceeded your per-minute rate limit", Header: http.Header{"Retry-After": {"1"}}}, domain.FailureRateLimited},
	{"529", fakes.Reply{Status: 529, ErrorMessage: "Overloaded"}, domain.FailureOverloaded},
	{"billing", fakes.Reply{Status: 400, ErrorMessage: "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}, domain.FailureQuotaExhausted},
	{"401", fakes.Reply{Status: 401, ErrorMessage: "invalid x-api-key"}, domain.FailureAuthFailed},
	{"context", fakes.Reply{Status: 400, ErrorMessage: "prompt is too long: 208310 tokens > 200000 maximum"}, domain.FailureContextOverflow},
}

// failureEvidence logs what a failed turn carried, for docs/runtimes.md.
func failureEvidence(t *testing.T, r *rig, res domain.TurnResult, took time.Duration, srv *fakes.Server) {
	var retries []string
	for _, ev := range r.rec.All() {
		if ev.Type == domain.EventRuntimeRetrying {
			retries = append(retries, ev.Message)
		}
	}
	f := "none"
	if res.Failure != nil {
		f = res.Failure.Text()
	}
	t.Logf("outcome %s kind %v stop %q after %s, %d model calls; failure: %s; reply %q; runtime_retrying %d: %s",
		res.Outcome, res.Err, res.StopReason, took.Round(time.Second), len(srv.ModelCalls()), f, res.Reply, len(retries), strings.Join(retries, " | "))
}

// assertFailure checks a failed turn's class and retryability.
func assertFailure(t *testing.T, res domain.TurnResult, class domain.FailureClass) {
	require.NotEqual(t, domain.OutcomeCompleted, res.Outcome, "a provider failure never completes")
	require.NotNil(t, res.Failure)
	assert.Equal(t, class, res.Failure.Class, res.Failure.Evidence)
	assert.Equal(t, class.Retryable(), res.Retryable())
}

// TestFailuresClaudeCurrent: the Claude adapter 0.101.0, its own retries
// cut to 2 (CLAUDE_CODE_MAX_RETRIES) so a rate limit ends in seconds.
func TestFailuresClaudeCurrent(t *testing.T) {
	for _, shape := range anthropicFailures {
		t.Run(shape.name, func(t *testing.T) {
			r, srv := claudeRigOf(t, "claude-current")
			r.setenv("CLAUDE_CODE_MAX_RETRIES", "2")
			srv.SetFallback(shape.reply)
			sess := r.mustStart(func(o *app.Options) { o.Settings.TurnTimeout = 150 * time.Second })
			t0 := time.Now()
			res := r.turn(sess, "say hello")
			failureEvidence(t, r, res, time.Since(t0), srv)
			assertFailure(t, res, shape.class)
		})
	}
}
