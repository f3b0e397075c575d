//go:build interop

package interop

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// TestUsageCLICodex runs `acpdrive run` with the measurement sources the
// CLI ships (the Codex source claims codex-acp and reads the rollout
// under the CODEX_HOME the runtime was given, which the rig also gives the
// CLI): each turn_result carries that turn's exact figures, run_result
// their sum, and token counts is not a gap.
func TestUsageCLICodex(t *testing.T) {
	t.Parallel()
	r, srv := codexRig(t)
	r.measure = true
	srv.Script(
		fakes.TextReply(codexTurnUsage[0], "First ", "answer."),
		fakes.TextReply(codexTurnUsage[1], "Second ", "answer."),
	)
	run := r.cli("first question", "second question")
	require.Equal(t, 0, run.Code, run.Stderr)
	require.Len(t, run.Results, 2)
	var total domain.Usage
	for i, res := range run.Results {
		want := wantCodexUsage(codexTurnUsage[i])
		require.NotNil(t, res.Usage, "turn %d measured", i+1)
		assert.Equal(t, want, *res.Usage, "turn %d", i+1)
		assert.NotEmpty(t, res.Model)
		total = total.Add(want)
	}
	require.NotNil(t, run.Run)
	require.NotNil(t, run.Run.Usage)
	assert.Equal(t, total, *run.Run.Usage)
	assert.Equal(t, 2, run.Run.MeasuredTurns)
	assert.NotContains(t, run.Run.CapabilityGaps, "token counts")
}
