//go:build unix

package faults

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/acpdrive/acpdrive/domain"
)

// Runtimes that lie about a failure (docs/behaviour.md#failures): an
// error report in a reply that carries no marker, a marker on a normal
// reply, an error whose text is the agent's prose.

const (
	initCodex2 = `{"protocolVersion":1,"agentCapabilities":{"loadSession":false},"agentInfo":{"name":"@agentclientprotocol/codex-acp","version":"2.6.0"}}`
	// failureMeta is the session failure extension's error record: an
	// exhausted quota (category limit, no action).
	failureMeta = `{"jetbrains":{"air":{"version":1,"sessionFailure":{"id":"t:error","revision":1,"category":"limit","severity":"error","title":"The account has no available quota.","actions":[]}}}}`
	codexReply  = "exceeded retry limit, last status: 429 Too Many Requests"
)

// hostileLies runs the lying behaviours; it reports whether name is one.
func hostileLies(p *peer, name string) bool {
	answer := func(init, text, result string) {
		p.handshake(init)
		m := p.await("session/prompt")
		p.update("s1", chunk(text))
		p.reply(m.ID, result)
		p.serve()
	}
	switch name {
	case "lie-error-text-no-marker":
		// Another runtime's reply that is, whole, codex-acp 2.x's error
		// report: nothing marks it, this runtime is not codex-acp.
		answer(initDefault, codexReply, `{"stopReason":"end_turn"}`)
	case "lie-codex-prose":
		// codex-acp 2.6.0 whose agent quotes the error text in prose.
		answer(initCodex2, "The server said "+codexReply+"; I added a back-off.", `{"stopReason":"end_turn"}`)
	case "lie-codex-error-reply":
		// codex-acp 2.6.0 reporting a 429 after its retries as a
		// completed turn.
		answer(initCodex2, codexReply+"\n\n", `{"stopReason":"end_turn"}`)
	case "lie-marker-normal-reply":
		// A normal reply whose response carries the failure record.
		answer(initDefault, "All done, the tests pass.", `{"stopReason":"end_turn","_meta":`+failureMeta+`}`)
	case "lie-warning-marker":
		// A retry warning on the response (severity warning): no failure.
		warn := `{"jetbrains":{"air":{"version":1,"sessionFailure":{"id":"t:error","revision":1,"category":"limit","severity":"warning","title":"Retrying, attempt 1 of 10.","actions":[]}}}}`
		answer(initDefault, "Done.", `{"stopReason":"end_turn","_meta":`+warn+`}`)
	case "lie-error-prose":
		// A JSON-RPC error whose message is prose that mentions a
		// documented text: not anchored, unknown.
		p.handshake(initDefault)
		m := p.await("session/prompt")
		msg, _ := json.Marshal("Internal error: I think the Prompt is too long, maybe")
		p.raw(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32603,"message":` + string(msg) + `}}` + "\n")
		p.serve()
	default:
		return false
	}
	return true
}

// TestFaultsLies: each lying runtime ends as docs/behaviour.md#failures
// documents it.
func TestFaultsLies(t *testing.T) {
	cases := []struct {
		behaviour string
		outcome   domain.Outcome
		class     domain.FailureClass // "" when no failure
	}{
		{"lie-error-text-no-marker", domain.OutcomeCompleted, ""},
		{"lie-codex-prose", domain.OutcomeCompleted, ""},
		{"lie-codex-error-reply", domain.OutcomeFailed, domain.FailureRateLimited},
		{"lie-marker-normal-reply", domain.OutcomeFailed, domain.FailureQuotaExhausted},
		{"lie-warning-marker", domain.OutcomeCompleted, ""},
		{"lie-error-prose", domain.OutcomeFailed, domain.FailureUnknown},
	}
	for _, c := range cases {
		t.Run(c.behaviour, func(t *testing.T) {
			t.Parallel()
			r := newRig(t, c.behaviour)
			r.mustStart()
			res, _ := r.turn(context.Background(), "go")
			if res.Outcome != c.outcome {
				t.Fatalf("outcome %s (%v); want %s", res.Outcome, res.Err, c.outcome)
			}
			switch {
			case c.class == "" && res.Failure != nil:
				t.Errorf("failure %+v; want none", *res.Failure)
			case c.class != "" && (res.Failure == nil || res.Failure.Class != c.class):
				t.Errorf("failure %+v; want class %s", res.Failure, c.class)
			}
			if c.class == domain.FailureQuotaExhausted && res.Retryable() {
				t.Error("an exhausted quota is retryable; want not")
			}
			r.mustComplete("again")
		})
	}
}
