package main_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
)

// The turns' own figures; the reference agent below reports them as the
// session's running total, as Copilot CLI does.
const (
	factsFirst  = `{"inputTokens":100,"outputTokens":10,"totalTokens":110}`
	factsSecond = `{"inputTokens":40,"outputTokens":5,"totalTokens":45}`
)

// copilotAgent is the reference agent announcing Copilot CLI's
// agentInfo.name and reporting each session's running total of usage.
func copilotAgent(t *testing.T) string {
	return testbin.Path(t) + " agent --scenario usage-running-total --agent-name Copilot"
}

// TestRunRunningTotal: a runtime whose prompt result carries the
// session's running total (the table of runtime facts, by agentInfo.name)
// has each turn measured as its own figure, with or without --no-measure
// (docs/behaviour.md#token-accounting).
func TestRunRunningTotal(t *testing.T) {
	t.Parallel()
	for _, flags := range [][]string{{"--no-measure"}, nil} {
		t.Run(map[bool]string{true: "no-measure", false: "measured"}[len(flags) > 0], func(t *testing.T) {
			t.Parallel()
			args := append([]string{"run", "--json", "--command", copilotAgent(t)}, flags...)
			args = append(args, usageTurn(t, factsFirst, nil), usageTurn(t, factsSecond, nil))
			stdout, stderr, code := runIn(t, t.TempDir(), args...)
			require.Equal(t, 0, code, stderr)
			results := linesOf(wireLines(t, stdout), "turn_result")
			require.Len(t, results, 2, stdout)
			total := func(l map[string]any) any { return l["usage"].(map[string]any)["total_tokens"] }
			assert.Equal(t, float64(110), total(results[0]))
			assert.Equal(t, float64(45), total(results[1]), "the second turn's own figure, not the session's total")
			assert.Equal(t, float64(155), total(wireRun(t, stdout)))
		})
	}
}

// TestBatchRunningTotal: the same on a shared process (batch places its
// tasks' sessions on an app.Host, which arms no measurement source): each
// task's usage sums its turns' own figures, each session's running total
// its own (docs/behaviour.md#token-accounting, #batch).
func TestBatchRunningTotal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	task := func(id string, usages ...string) string {
		prompts := make([]string, len(usages))
		for i, u := range usages {
			prompts[i] = usageTurn(t, u, nil)
		}
		b, err := json.Marshal(map[string]any{"id": id, "prompts": prompts})
		require.NoError(t, err)
		return string(b)
	}
	tasks := writeTasks(t, dir, task("a", factsFirst, factsSecond), task("b", factsSecond, factsFirst))
	stdout, stderr, code := runIn(t, dir, "batch", "--json", "--no-measure", "--parallel", "2",
		"--sessions-per-process", "2", "--keep-warm", "1h", "--command", copilotAgent(t), tasks)
	require.Equal(t, 0, code, stderr)
	got := taskLines(t, stdout, 2)
	assert.Equal(t, got["a"].AgentPID, got["b"].AgentPID, "one shared process")
	for _, id := range []string{"a", "b"} {
		require.NotNil(t, got[id].Usage, stdout)
		assert.Equal(t, 2, got[id].MeasuredTurns)
		assert.Equal(t, int64(155), got[id].Usage.TotalTokens, "task %s: its turns' own figures summed", id)
	}
}
