//go:build interop

package interop

import (
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/copilot_measure"
	"github.com/acpdrive/acpdrive/adapters/qwen_measure"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// Usage the protocol carries (docs/behaviour.md#token-accounting): the
// prompt result's usage measures a turn first; every source reports the
// one meaning of every counter.

// oneMeaning is a fake reply's figures in the one meaning, for the fakes
// whose input counts the cached tokens (OpenAI's Responses and Chat
// Completions, Gemini): input without the cached tokens, output with the
// reasoning, total their sum (the fake's own total).
func oneMeaning(u fakes.Usage) domain.Usage {
	return domain.Usage{
		InputTokens:     int64(u.Input - u.Cached),
		OutputTokens:    int64(u.Output + u.Thoughts),
		CacheReadTokens: int64(u.Cached),
		ReasoningTokens: int64(u.Thoughts),
		TotalTokens:     int64(u.Total()),
	}
}

// modelSide are model-side figures in the one meaning; asAnthropic and
// asOpenAI are the same figures as each API counts them (Anthropic's input
// excludes the cache reads, OpenAI's and Gemini's include them).
type modelSide struct{ input, cached, output int }

func (m modelSide) asAnthropic() fakes.Usage {
	return fakes.Usage{Input: m.input, Cached: m.cached, Output: m.output}
}
func (m modelSide) asOpenAI() fakes.Usage {
	return fakes.Usage{Input: m.input + m.cached, Cached: m.cached, Output: m.output}
}
func (m modelSide) want() domain.Usage {
	return domain.Usage{InputTokens: int64(m.input), CacheReadTokens: int64(m.cached), OutputTokens: int64(m.output),
		TotalTokens: int64(m.input + m.cached + m.output)}
}

// wireTurns are the two turns' model-side figures: different, so a running
// total reported as a turn's figure fails.
var wireTurns = []modelSide{{input: 80, cached: 40, output: 12}, {input: 160, cached: 100, output: 21}}

// TestUsageWireCurrent: Claude 0.101.0 and codex 2.6.0 report usage in
// their prompt results; each of two turns is measured from it
// (token_usage source acp_prompt_result) with exactly the fake's figures
// in the one meaning, the journal source cross-checks without a warning,
// and Claude's turn costs add up to its cumulative session cost.
func TestUsageWireCurrent(t *testing.T) {
	t.Parallel()
	for _, c := range currentRows() {
		t.Run(c.row, func(t *testing.T) {
			r, srv := c.rig(t, c.row)
			replies := make([]fakes.Reply, len(wireTurns))
			for i, m := range wireTurns {
				u := m.asOpenAI()
				if c.row == "claude-current" {
					u = m.asAnthropic()
				}
				replies[i] = fakes.TextReply(u, "Answer ", "given.")
			}
			srv.Script(replies...)
			sess := r.mustStart(c.measure(r))
			var costs []domain.Cost
			for i, prompt := range []string{"first question", "second question"} {
				res := r.turn(sess, prompt)
				require.Equal(t, completed, outcomeOf(res), "turn %d: %s", i+1, res.Message())
				require.NotNil(t, res.Usage, "turn %d measured", i+1)
				assert.Equal(t, domain.SourcePromptResult, res.Source, "turn %d: measured from the protocol", i+1)
				assert.Equal(t, wireTurns[i].want(), *res.Usage, "turn %d: the fake's figures in the one meaning", i+1)
				if res.Cost != nil {
					costs = append(costs, *res.Cost)
				}
			}
			r.stop(sess)
			logs := r.logs.String()
			assert.Contains(t, logs, "turn measured by the protocol and by a journal", "the journal cross-checks")
			assert.NotContains(t, logs, "disagrees with the protocol's")
			if c.row != "claude-current" {
				return
			}
			var last *domain.Cost
			for _, ev := range r.rec.OfType(domain.EventContextUsage) {
				if ev.Context.Cost != nil {
					last = ev.Context.Cost
				}
			}
			require.NotNil(t, last, "Claude reports a cumulative cost")
			require.Len(t, costs, 2, "each turn has a cost")
			assert.InDelta(t, last.Amount, costs[0].Amount+costs[1].Amount, 1e-9, "the turn costs add up to the runtime's cumulative cost")
			assert.Equal(t, last.Currency, costs[1].Currency)
		})
	}
}

// TestUsageWireOldCodexPin: codex-acp 0.16.0 sends no usage; its rollout
// (the journal source) reports the same normalized figures as codex 2.6.0
// reports on the wire for the same model-side counts.
func TestUsageWireOldCodexPin(t *testing.T) {
	t.Parallel()
	r, srv := codexRig(t)
	srv.Script(fakes.TextReply(wireTurns[0].asOpenAI(), "Answer."), fakes.TextReply(wireTurns[1].asOpenAI(), "Again."))
	sess := r.mustStart(codexMeasured(r))
	for i, prompt := range []string{"first question", "second question"} {
		res := r.turn(sess, prompt)
		require.Equal(t, completed, outcomeOf(res), "turn %d: %s", i+1, res.Message())
		require.NotNil(t, res.Usage, "turn %d measured", i+1)
		assert.Equal(t, codexMeasuredName, res.Source, "turn %d: the journal measured it", i+1)
		assert.Equal(t, wireTurns[i].want(), *res.Usage, "turn %d", i+1)
	}
	r.stop(sess)
}

// codexMeasuredName is the Codex journal source's name.
const codexMeasuredName = "codex_rollout"

// TestUsageWireFiveRuntimes: the same model-side figures, fed to Claude,
// Codex, Gemini, Qwen and Copilot through the fakes, are reported
// identically, whichever source measured them.
func TestUsageWireFiveRuntimes(t *testing.T) {
	t.Parallel()
	m := wireTurns[0]
	rows := []struct {
		name    string
		rig     func(t *testing.T) (*rig, *fakes.Server)
		measure func(r *rig) optFn
		reply   fakes.Usage
		aside   string // the marker of a side call (the session title) answered aside
	}{
		{"claude", func(t *testing.T) (*rig, *fakes.Server) { return claudeRigOf(t, "claude-current") }, claudeMeasured, m.asAnthropic(), "You are naming a coding session"},
		{"codex", func(t *testing.T) (*rig, *fakes.Server) { return codexRigOf(t, "codex-current") }, codexMeasured, m.asOpenAI(), "generate a very short title for a conversation"},
		{"gemini", func(t *testing.T) (*rig, *fakes.Server) { return geminiRig(t, true) }, geminiSource, m.asOpenAI(), ""},
		{"qwen", func(t *testing.T) (*rig, *fakes.Server) { return qwenRig(t) }, func(r *rig) optFn {
			return sources(qwen_measure.New(qwen_measure.Options{Logger: slog.New(slog.NewTextHandler(r.logs, nil)), Home: r.home}))
		}, m.asOpenAI(), ""},
		{"copilot", func(t *testing.T) (*rig, *fakes.Server) { return copilotRig(t) }, func(r *rig) optFn {
			return sources(copilot_measure.New(copilot_measure.Options{Logger: slog.New(slog.NewTextHandler(r.logs, nil)),
				StateDir: filepath.Join(r.home, ".copilot")}))
		}, m.asOpenAI(), ""},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			r, srv := row.rig(t)
			if row.aside != "" {
				srv.Aside(row.aside, fakes.TextReply(fakes.Usage{Input: 50, Output: 4}, "One question"))
			}
			srv.Script(fakes.TextReply(row.reply, "Answer."))
			sess := r.mustStart(row.measure(r))
			res := r.turn(sess, "one question")
			require.Equal(t, completed, outcomeOf(res), res.Message())
			require.NotNil(t, res.Usage, "measured")
			t.Logf("%s measured by %s", row.name, res.Source)
			assert.Equal(t, m.want(), *res.Usage, "the same figures, whatever the runtime and the source")
			if resp, ok := r.wire.responseTo("session/prompt"); ok {
				t.Logf("%s prompt result: %s", row.name, strings.TrimSpace(string(resp.Result)))
			}
			r.stop(sess)
		})
	}
}

// sources sets the session's measurement sources.
func sources(srcs ...ports.MeasurementSource) optFn {
	return func(o *app.Options) { o.MeasurementSources = srcs }
}

// TestUsageWireCeilingsCLI: through `acpdrive run` on codex 2.6.0, whose
// prompt results carry usage, --max-tokens stops the second prompt; on
// Claude 0.101.0, which reports a cumulative cost, --max-cost does.
func TestUsageWireCeilingsCLI(t *testing.T) {
	t.Parallel()
	cases := []struct {
		row, flag, value, stopped string
		rig                       func(t testing.TB, row string) (*rig, *fakes.Server)
		reply                     fakes.Usage
	}{
		{"codex-current", "--max-tokens", "100", domain.MsgTokenCeilingReached, codexRigOf, wireTurns[0].asOpenAI()},
		{"claude-current", "--max-cost", "0.0000001", domain.MsgCostCeilingReached, claudeRigOf, wireTurns[0].asAnthropic()},
	}
	for _, c := range cases {
		t.Run(c.row, func(t *testing.T) {
			r, srv := c.rig(t, c.row)
			srv.Script(fakes.TextReply(c.reply, "Answer."), fakes.TextReply(c.reply, "Again."))
			args := append([]string{"run", "--json"}, r.launchFlags()...)
			args = append(args, "--no-measure", "--stall-timeout", "0", "--turn-timeout", "3m", c.flag, c.value, "first question", "second question")
			stdout, stderr, code := r.acpdrive(args...)
			assert.Equal(t, 1, code, stderr)
			var run struct {
				Turns   int    `json:"turns"`
				Stopped string `json:"stopped"`
			}
			var results int
			for l := range strings.SplitSeq(stdout, "\n") {
				switch {
				case strings.HasPrefix(l, `{"type":"run_result"`):
					require.NoError(t, json.Unmarshal([]byte(l), &run))
				case strings.HasPrefix(l, `{"type":"turn_result"`):
					results++
					assert.Contains(t, l, `"source":"acp_prompt_result"`, "measured from the protocol with no journal source")
				}
			}
			assert.Equal(t, 1, run.Turns, "the second prompt is never sent")
			assert.Equal(t, 1, results)
			assert.Equal(t, c.stopped, run.Stopped)
		})
	}
}
