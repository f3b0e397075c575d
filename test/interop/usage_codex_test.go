//go:build interop

package interop

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/codex_measure"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// Codex token accounting: codex-acp against the fake Responses server,
// measured by adapters/codex_measure from the rollout under the rig's
// CODEX_HOME.

// codexTurnUsage are the fake server's figures for successive turns,
// different from one another so a running total reported as a turn's
// figures fails.
var codexTurnUsage = []fakes.Usage{
	{Input: 120, Output: 12, Cached: 40, Thoughts: 5},
	{Input: 260, Output: 21, Cached: 100, Thoughts: 9},
	{Input: 410, Output: 33, Cached: 230, Thoughts: 0},
}

// wantCodexUsage is what the source must report for a turn whose one
// model call the fake server answered with u, in the one meaning
// (oneMeaning, test/interop/usage_wire_test.go).
func wantCodexUsage(u fakes.Usage) domain.Usage { return oneMeaning(u) }

// codexMeasured plugs the Codex measurement source into a library
// session. The runtime starts through `env -i` with the rig's CODEX_HOME,
// not acpdrive's, so the source is told where it is.
func codexMeasured(r *rig) optFn {
	return func(o *app.Options) {
		src := codex_measure.New(codex_measure.Options{
			Logger: slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
			Home:   filepath.Join(r.root, "codex-home"),
		})
		o.MeasurementSources = []ports.MeasurementSource{src}
	}
}

// usageEvents are the token_usage events the rig recorded.
func usageEvents(r *rig) []domain.Event { return r.rec.OfType(domain.EventTokenUsage) }

// TestUsageCodex: each turn of a two-turn session reports exactly the fake
// server's figures for that turn, attributed to the model requested, and
// "token counts" is not a gap; a session continued through session/load
// counts only its own turn.
func TestUsageCodex(t *testing.T) {
	t.Parallel()
	t.Run("two turns", func(t *testing.T) {
		r, srv := codexRig(t)
		srv.Script(
			fakes.TextReply(codexTurnUsage[0], "First ", "answer."),
			fakes.TextReply(codexTurnUsage[1], "Second ", "answer."),
		)
		sess := r.mustStart(codexMeasured(r))
		assert.Empty(t, sess.Capabilities().Gaps(), "a claimed and confirmed source leaves no gap")
		assert.Contains(t, r.logs.String(), "measurement source claimed the launch")

		var took []time.Duration
		for i, prompt := range []string{"first question", "second question"} {
			t0 := time.Now()
			res := r.turn(sess, prompt)
			took = append(took, time.Since(t0))
			require.Equal(t, completed, outcomeOf(res), "turn %d", i+1)
			evs := usageEvents(r)
			require.Len(t, evs, i+1, "one token_usage per turn")
			require.NotNil(t, evs[i].Usage)
			assert.Equal(t, wantCodexUsage(codexTurnUsage[i]), *evs[i].Usage, "turn %d", i+1)
			assert.Equal(t, codexModel, evs[i].Model, "turn %d", i+1)
		}
		r.stop(sess)
		t.Logf("turn wall times with the measurement: %v", took)
		logWaits(t, r)

		calls := srv.ModelCalls()
		require.Len(t, calls, 2, srv.Describe())
		for _, c := range calls {
			assert.Equal(t, codexModel, c.JSON()["model"], "the model requested")
		}
		assert.Empty(t, sess.Capabilities().Gaps())
		for _, s := range r.shape() {
			assert.NotContains(t, s, string(domain.CapTokenCounts), "no gap notice names token counts")
		}
		assertTokenUsageBeforeOutcome(t, r.shape())
	})

	t.Run("session/load of a saved session", func(t *testing.T) {
		r, srv := codexRig(t)
		srv.Script(
			fakes.TextReply(codexTurnUsage[0], "The word ", "is apple."),
			fakes.TextReply(codexTurnUsage[2], "You asked me ", "to remember apple."),
		)
		id := saveWithCLI(t, r) // unmeasured: the CLI gets no source here

		r.phase("load")
		sess := r.mustStart(resume(id), codexMeasured(r))
		require.Equal(t, id, sess.ID())
		assert.Equal(t, "session/load", sess.Route())
		assert.Empty(t, sess.Capabilities().Gaps())
		assert.Equal(t, completed, outcomeOf(r.turn(sess, secondPrompt)))
		r.stop(sess)

		evs := usageEvents(r)
		require.Len(t, evs, 1, "only the continued session's own turn is measured")
		require.NotNil(t, evs[0].Usage)
		assert.Equal(t, wantCodexUsage(codexTurnUsage[2]), *evs[0].Usage, "the saved turn is not counted again")
		assert.Equal(t, codexModel, evs[0].Model)
		assert.Contains(t, r.logs.String(), "codex rollout of a continued session: reading from its end")
		assert.NotContains(t, r.logs.String(), "disagree", "the running total carried over the load agrees")
	})
}

// logWaits puts the source's per-turn waits in the test log.
func logWaits(t *testing.T, r *rig) {
	for _, l := range strings.Split(r.logs.String(), "\n") {
		if strings.Contains(l, "codex rollout: turn figures read") {
			t.Log(l)
		}
	}
}

// assertTokenUsageBeforeOutcome checks that each token_usage event comes
// after the turn's last notification and before its outcome event.
func assertTokenUsageBeforeOutcome(t *testing.T, shape []string) {
	t.Helper()
	var got []string
	for _, s := range shape {
		switch {
		case s == string(domain.EventTokenUsage), s == "turn_completed", s == started:
			got = append(got, s)
		}
	}
	assert.Equal(t, []string{started, "token_usage", "turn_completed", started, "token_usage", "turn_completed"}, got, "%q", shape)
}
