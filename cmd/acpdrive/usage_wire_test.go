package main_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wireLines decodes every JSON line of a --json run.
func wireLines(t *testing.T, stdout string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for l := range strings.SplitSeq(stdout, "\n") {
		if !strings.HasPrefix(l, "{") {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		out = append(out, m)
	}
	return out
}

// wireRun is the run_result line of a --json run.
func wireRun(t *testing.T, stdout string) map[string]any {
	t.Helper()
	runs := linesOf(wireLines(t, stdout), "run_result")
	require.Len(t, runs, 1, stdout)
	return runs[0]
}

func linesOf(lines []map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, l := range lines {
		if l["type"] == typ {
			out = append(out, l)
		}
	}
	return out
}

// usageTurn is the "#usage-wire" prompt whose argument makes the
// reference agent report usage, and a usage_update first when ctx is set.
func usageTurn(t *testing.T, usage string, ctx map[string]any) string {
	t.Helper()
	arg := map[string]any{}
	if usage != "" {
		arg["usage"] = json.RawMessage(usage)
	}
	for k, v := range ctx {
		arg[k] = v
	}
	b, err := json.Marshal(arg)
	require.NoError(t, err)
	return "#usage-wire " + string(b)
}

// claudeFigures is the Claude adapter's prompt result usage (the default
// of "#usage-wire"), and its figures in the one meaning.
var claudeFigures = map[string]any{
	"input_tokens": float64(1733), "output_tokens": float64(61), "cache_read_tokens": float64(1009),
	"cache_write_tokens": float64(211), "reasoning_tokens": float64(0), "tool_use_tokens": float64(0),
	"total_tokens": float64(3014),
}

// TestRunMeasuresFromThePromptResult: a runtime whose prompt results carry
// usage is measured from them, with no journal source: token_usage names
// the source, turn_result and run_result carry the figures in the one
// meaning, and token counts is not a gap.
func TestRunMeasuresFromThePromptResult(t *testing.T) {
	codex := `{"totalTokens":1794,"inputTokens":724,"cachedReadTokens":1009,"cachedWriteTokens":0,"outputTokens":61,"thoughtTokens":29}`
	stdout, stderr, code := runIn(t, t.TempDir(), "run", "--json", "#usage-wire", usageTurn(t, codex, nil))
	require.Equal(t, 0, code, stderr)
	lines := wireLines(t, stdout)

	events := linesOf(lines, "token_usage")
	require.Len(t, events, 2, stdout)
	for _, ev := range events {
		assert.Equal(t, "acp_prompt_result", ev["source"])
	}
	assert.Equal(t, claudeFigures, events[0]["usage"])
	assert.Equal(t, map[string]any{
		"input_tokens": float64(724), "output_tokens": float64(61), "cache_read_tokens": float64(1009),
		"cache_write_tokens": float64(0), "reasoning_tokens": float64(29), "tool_use_tokens": float64(0),
		"total_tokens": float64(1794),
	}, events[1]["usage"], "reasoning is part of output: the total is the sum without it")

	results := linesOf(lines, "turn_result")
	require.Len(t, results, 2)
	assert.Equal(t, claudeFigures, results[0]["usage"])
	assert.Equal(t, "acp_prompt_result", results[0]["source"])
	run := wireRun(t, stdout)
	assert.Equal(t, float64(2), run["measured_turns"])
	assert.Equal(t, float64(3014+1794), run["usage"].(map[string]any)["total_tokens"])
	assert.NotContains(t, run["capability_gaps"], "token counts", "the protocol delivers token counts")
}

// TestRunWireUsageUnusable: a usage object without the counters that
// define a figure, or malformed, measures nothing and never fails the turn.
func TestRunWireUsageUnusable(t *testing.T) {
	for name, usage := range map[string]string{
		"no output":  `{"inputTokens":5,"totalTokens":5}`,
		"malformed":  `{"inputTokens":"many","outputTokens":1}`,
		"null":       `null`,
		"not object": `[1,2]`,
	} {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, code := runIn(t, t.TempDir(), "run", "--json", usageTurn(t, usage, nil))
			require.Equal(t, 0, code, stderr)
			lines := wireLines(t, stdout)
			assert.Empty(t, linesOf(lines, "token_usage"))
			res := linesOf(lines, "turn_result")
			require.Len(t, res, 1)
			assert.Equal(t, "turn_completed", res[0]["outcome"])
			assert.Nil(t, res[0]["usage"])
			assert.Contains(t, wireRun(t, stdout)["capability_gaps"], "token counts")
		})
	}
}

// TestRunCostPerTurn: a turn's cost is the difference of the cumulative
// cost between the last value before it and its end; a change of currency
// reports no cost for that turn and nothing is summed across currencies.
func TestRunCostPerTurn(t *testing.T) {
	usd := func(a float64) map[string]any { return map[string]any{"amount": a, "currency": "USD"} }
	eur := func(a float64) map[string]any { return map[string]any{"amount": a, "currency": "EUR"} }
	ctx := func(used int, cost map[string]any) map[string]any {
		return map[string]any{"used": used, "size": 1000000, "cost": cost}
	}
	stdout, stderr, code := runIn(t, t.TempDir(), "run", "--json",
		usageTurn(t, "", ctx(3014, usd(0.25))),
		usageTurn(t, "", ctx(6028, usd(0.75))),
		"hello", // no usage_update: no cost, no context
		usageTurn(t, "", ctx(9042, eur(2))),
	)
	require.Equal(t, 0, code, stderr)
	lines := wireLines(t, stdout)
	results := linesOf(lines, "turn_result")
	require.Len(t, results, 4)
	assert.Equal(t, usd(0.25), results[0]["cost"], "the first turn's cost counts from zero")
	assert.Equal(t, usd(0.5), results[1]["cost"], "the difference of the cumulative cost")
	assert.Nil(t, results[2]["cost"])
	assert.Nil(t, results[2]["context"])
	assert.Nil(t, results[3]["cost"], "the currency changed: no cost")
	assert.Equal(t, map[string]any{"used": float64(6028), "size": float64(1000000), "cost": usd(0.75)}, results[1]["context"])

	events := linesOf(lines, "token_usage")
	require.Len(t, events, 3)
	assert.Equal(t, usd(0.5), events[1]["cost"])

	run := wireRun(t, stdout)
	assert.Equal(t, []any{usd(0.75)}, run["cost"], "per currency, never summed across currencies")
}

// TestRunCeilings: --max-tokens, --max-cost and --max-context-fraction stop
// the run before the next prompt once reached; a ceiling nothing reports
// against closes the run with a notice.
func TestRunCeilings(t *testing.T) {
	usd := map[string]any{"amount": 0.25, "currency": "USD"}
	first := usageTurn(t, "", map[string]any{"used": 600, "size": 1000, "cost": usd})
	cases := []struct {
		name    string
		flags   []string
		stopped string
	}{
		{"tokens", []string{"--max-tokens", "3000"}, "the run reached its token ceiling (agent.max_tokens); no further prompt was sent"},
		{"cost", []string{"--max-cost", "0.25"}, "the run reached its cost ceiling (agent.max_cost); no further prompt was sent"},
		{"context", []string{"--max-context-fraction", "0.6"}, "the session's context window reached its ceiling (agent.max_context_fraction); no further prompt was sent"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append(append([]string{"run", "--json"}, c.flags...), first, "#usage-wire")
			stdout, stderr, code := runIn(t, t.TempDir(), args...)
			assert.Equal(t, 1, code, stderr)
			run := wireRun(t, stdout)
			assert.Equal(t, float64(1), run["turns"], "the second prompt is never sent")
			assert.Equal(t, c.stopped, run["stopped"])
		})
	}
	t.Run("below", func(t *testing.T) {
		stdout, stderr, code := runIn(t, t.TempDir(), "run", "--json", "--max-cost", "1", "--max-context-fraction", "0.61",
			"--max-tokens", "10000", first, "#usage-wire")
		require.Equal(t, 0, code, stderr)
		run := wireRun(t, stdout)
		assert.Equal(t, float64(2), run["turns"])
		assert.Nil(t, run["stopped"])
		assert.Nil(t, run["notice"])
	})
	t.Run("unbounded", func(t *testing.T) {
		stdout, stderr, code := runIn(t, t.TempDir(), "run", "--json", "--max-cost", "1", "--max-context-fraction", "0.5", "hello")
		require.Equal(t, 0, code, stderr)
		run := wireRun(t, stdout)
		assert.Equal(t, "run reported no cost, cost ceiling could not bound it; run reported no context window, context ceiling could not bound it", run["notice"])
	})
	t.Run("bad values", func(t *testing.T) {
		for _, flags := range [][]string{{"--max-cost", "-1"}, {"--max-context-fraction", "1.5"}} {
			_, stderr, code := runIn(t, t.TempDir(), append(append([]string{"run"}, flags...), "hello")...)
			assert.Equal(t, 2, code, stderr)
			assert.Contains(t, stderr, flags[0])
		}
	})
}

// TestRunUsageHuman: the human summary shows the turn's cost and context
// window ("context 3,014 / 1,000,000") and the run's cost.
func TestRunUsageHuman(t *testing.T) {
	stdout, stderr, code := runIn(t, t.TempDir(), "run",
		usageTurn(t, "", map[string]any{"used": 3014, "size": 1000000, "cost": map[string]any{"amount": 0.0100088, "currency": "USD"}}))
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "tokens: 1733 in, 61 out, cache 1009 read / 211 written, 3014 total; cost 0.0100 USD; context 3,014 / 1,000,000\n")
	assert.Contains(t, stdout, "3014 total over 1 measured turn(s); cost 0.0100 USD")
}
