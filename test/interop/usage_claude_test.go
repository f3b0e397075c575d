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

	"github.com/acpdrive/acpdrive/adapters/claude_measure"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// Token usage of Claude Code through the Claude agent ACP adapter, read
// from its session transcript by adapters/claude_measure, against the fake
// Anthropic server's fixed figures.

// claudeMeasured adds the Claude transcript source to a library session.
// The runtime's HOME is the rig's (set through env -i), not this
// process's, so the source is told its config home.
func claudeMeasured(r *rig) optFn {
	return func(o *app.Options) {
		o.MeasurementSources = []ports.MeasurementSource{claude_measure.New(claude_measure.Options{
			Logger:    slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
			ConfigDir: filepath.Join(r.home, ".claude"),
		})}
	}
}

// anthropicUsage is what a turn made of these fake replies cost: the
// fake reports no cache writes, and Anthropic's input excludes cache reads.
func anthropicUsage(replies ...fakes.Usage) domain.Usage {
	var u domain.Usage
	for _, f := range replies {
		u.InputTokens += int64(f.Input)
		u.OutputTokens += int64(f.Output)
		u.CacheReadTokens += int64(f.Cached)
	}
	u.TotalTokens = u.InputTokens + u.OutputTokens + u.CacheReadTokens + u.CacheWriteTokens
	return u
}

// tokenUsage returns the rig's token_usage events.
func tokenUsage(r *rig) []domain.Event { return r.rec.OfType(domain.EventTokenUsage) }

// logMeasured logs the source's per-turn records (how long each wait took).
func logMeasured(t *testing.T, r *rig) {
	t.Helper()
	for _, line := range strings.Split(r.logs.String(), "\n") {
		if strings.Contains(line, "turn measured") || strings.Contains(line, "turn unmeasured") || strings.Contains(line, "continued session: transcript") {
			t.Log(line)
		}
	}
}

// requestedModel is the model the runtime asked the fake for in call i.
func requestedModel(t *testing.T, srv *fakes.Server, i int) string {
	t.Helper()
	calls := srv.ModelCalls()
	require.Greater(t, len(calls), i, srv.Describe())
	model, _ := calls[i].JSON()["model"].(string)
	require.NotEmpty(t, model)
	return model
}

// TestUsageClaudeTwoTurns: turn 1 is a refused tool call and the model's
// answer (two model calls, the first streamed as two transcript records
// under one message id), turn 2 one text reply. Each turn's token_usage is
// exactly what the fake reported for that turn's calls, attributed to the
// model requested, and "token counts" is not in the gap.
func TestUsageClaudeTwoTurns(t *testing.T) {
	t.Parallel()
	r, srv := claudeRig(t)
	call1 := fakes.Usage{Input: 100, Output: 9, Cached: 30}
	call2 := fakes.Usage{Input: 130, Output: 6, Cached: 45}
	call3 := fakes.Usage{Input: 210, Output: 17, Cached: 12}
	srv.Script(
		fakes.Reply{
			Text:  []string{"Let me write the file."},
			Tool:  &fakes.ToolCall{ID: "toolu_usage_1", Name: "Bash", Args: map[string]any{"command": "echo interop > out.txt", "description": "Write out.txt"}},
			Usage: call1,
		},
		fakes.TextReply(call2, "I did not ", "write the file."),
		fakes.TextReply(call3, "Second ", "turn."),
	)
	sess := r.mustStart(claudeMeasured(r))
	assert.Empty(t, sess.Capabilities().Gaps(), "a claimed launch confirmed by the handshake has token counts")
	assert.Contains(t, r.logs.String(), "measurement source claimed the launch")

	t0 := time.Now()
	res1 := r.turn(sess, "write interop into out.txt")
	took1 := time.Since(t0)
	assert.Equal(t, completed, outcomeOf(res1))
	require.Len(t, tokenUsage(r), 1, "turn 1 measured")

	t0 = time.Now()
	res2 := r.turn(sess, "say something")
	took2 := time.Since(t0)
	assert.Equal(t, completed, outcomeOf(res2))
	r.stop(sess)
	t.Logf("turn 1 took %v, turn 2 took %v (each including the transcript wait)", took1, took2)
	logMeasured(t, r)

	require.Len(t, srv.ModelCalls(), 3, srv.Describe())
	assert.Equal(t, 0, srv.Unscripted())
	usage := tokenUsage(r)
	require.Len(t, usage, 2, "one token_usage per turn")
	for i, want := range []struct {
		usage domain.Usage
		call  int // a model call of the turn
	}{
		{anthropicUsage(call1, call2), 1},
		{anthropicUsage(call3), 2},
	} {
		require.NotNil(t, usage[i].Usage)
		assert.Equal(t, want.usage, *usage[i].Usage, "turn %d", i+1)
		assert.Equal(t, requestedModel(t, srv, want.call), usage[i].Model, "turn %d", i+1)
	}
	assert.Equal(t, requestedModel(t, srv, 0), requestedModel(t, srv, 1))

	// The figures come before each turn's outcome, and no gap notice.
	shape := r.shape()
	assert.NotContains(t, shape, gapNotice(domain.CapTokenCounts))
	var order []string
	for _, s := range shape {
		if s == string(domain.EventTokenUsage) || s == "turn_completed" {
			order = append(order, s)
		}
	}
	assert.Equal(t, []string{"token_usage", "turn_completed", "token_usage", "turn_completed"}, order, "%q", shape)
	assertNotWritten(t, r)
}

// TestUsageClaudeContinued: a session saved by one start and continued
// by another (session/load) counts only the continued turn.
func TestUsageClaudeContinued(t *testing.T) {
	t.Parallel()
	r, srv := claudeRig(t)
	first := fakes.Usage{Input: 50, Output: 5, Cached: 7}
	second := fakes.Usage{Input: 80, Output: 7, Cached: 9}
	srv.Script(
		fakes.TextReply(first, "The word ", "is apple."),
		fakes.TextReply(second, "You asked me ", "to remember apple."),
	)
	sess := r.mustStart(claudeMeasured(r))
	require.Equal(t, completed, outcomeOf(r.turn(sess, firstPrompt)))
	r.stop(sess)
	id := sess.ID()
	require.Len(t, tokenUsage(r), 1)
	assert.Equal(t, anthropicUsage(first), *tokenUsage(r)[0].Usage)

	r.phase("continued")
	// A creation store of its own: another acpdrive process continues the
	// session, so no UTC-minute hold.
	fresh := func(o *app.Options) { o.Creations = app.NewMemoryCreations() }
	sess2 := r.mustStart(claudeMeasured(r), resume(id), fresh)
	require.Equal(t, id, sess2.ID())
	require.Equal(t, "session/load", sess2.Route())
	require.Equal(t, completed, outcomeOf(r.turn(sess2, secondPrompt)))
	r.stop(sess2)
	continuedCallCarriesHistory(t, srv)
	logMeasured(t, r)

	usage := tokenUsage(r)
	require.Len(t, usage, 1, "one token_usage for the continued turn")
	assert.Equal(t, anthropicUsage(second), *usage[0].Usage, "the saved turn is not counted again")
	assert.Equal(t, requestedModel(t, srv, 1), usage[0].Model)
}
