//go:build interop

package interop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/gemini_measure"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// Gemini CLI's token usage through the gemini_telemetry measurement source
// (adapters/gemini_measure), against the fake Gemini API whose usage
// figures are fixed per reply.

// geminiUsageReadTimeout bounds each turn's wait for the telemetry file:
// Gemini CLI writes its log records in batches about 5 s apart.
const geminiUsageReadTimeout = 10 * time.Second

// passAppendedEnv rewrites the rig's `env -i VAR=… runtime …` command so
// the environment a measurement source appends reaches the runtime: `env
// -i` would drop it with the rest of acpdrive's environment. The runtime
// still gets none of this process's variables: each is unset by name
// (`env -u NAME …`), and what acpdrive appends (the source's settings, the
// containment tag) is not among them.
func passAppendedEnv(o *app.Options) {
	cmd := o.Settings.Command
	if len(cmd) < 2 || cmd[0] != "env" || cmd[1] != "-i" {
		return
	}
	out := []string{"env"}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name != "" && !strings.HasPrefix(name, "GEMINI_TELEMETRY_") {
			out = append(out, "-u", name)
		}
	}
	o.Settings.Command = append(out, cmd[2:]...)
}

// fakeGeminiUsage is what the source reports for a reply of the fake
// server: its usageMetadata in the one meaning (oneMeaning).
func fakeGeminiUsage(u fakes.Usage) domain.Usage { return oneMeaning(u) }

// telemetryDirs lists the source's private directories left in the rig's
// TMPDIR.
func telemetryDirs(t *testing.T, r *rig) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(r.tmp, "acpdrive-gemini-telemetry-*"))
	require.NoError(t, err)
	return m
}

// geminiUsageTurns are the two turns' fixed figures, different so that a
// running total fails the second.
var geminiUsageTurns = []fakes.Usage{
	{Input: 120, Output: 7, Cached: 20, Thoughts: 3},
	{Input: 310, Output: 11, Cached: 40, Thoughts: 5},
}

// usageTwoTurns runs a measured two-turn session with the source reading
// the journal under home, and asserts each turn's token_usage, the model
// and the capability record. It returns each turn's wall time (the turn
// and the measurement wait).
func usageTwoTurns(t *testing.T, r *rig, srv *fakes.Server, home string, opts ...optFn) []time.Duration {
	t.Helper()
	srv.Script(
		fakes.TextReply(geminiUsageTurns[0], "Hello ", "from the ", "fake Gemini."),
		fakes.TextReply(geminiUsageTurns[1], "Hello ", "again."),
	)
	source := func(o *app.Options) {
		o.MeasurementSources = []ports.MeasurementSource{gemini_measure.New(gemini_measure.Options{
			Logger:  o.Logger.With("component", "gemini_measure"),
			Home:    home,
			TempDir: r.tmp,
		})}
	}
	sess := r.mustStart(append([]optFn{source}, opts...)...)
	agentIs(t, sess, "gemini-cli", "0.61.0")
	assert.Empty(t, sess.Capabilities().Gaps(), "a claimed launch starts with token counts delivered")
	assert.Equal(t, domain.CapabilityState("ours"), sess.Capabilities().State(domain.CapTokenCounts))
	require.Len(t, telemetryDirs(t, r), 1, "one private directory for the start")

	var waits []time.Duration
	for i, prompt := range []string{"say hello", "say hello again"} {
		t0 := time.Now()
		res := r.turn(sess, prompt)
		waits = append(waits, time.Since(t0))
		require.Equal(t, completed, outcomeOf(res), "turn %d", i+1)
	}
	t.Logf("turn wall times (turn and measurement wait): %v", waits)

	usages := r.rec.OfType(domain.EventTokenUsage)
	require.Len(t, usages, 2, "one token_usage per turn:\n%s", strings.Join(r.shape(), "\n"))
	for i, want := range geminiUsageTurns {
		require.NotNil(t, usages[i].Usage, "turn %d", i+1)
		assert.Equal(t, fakeGeminiUsage(want), *usages[i].Usage, "turn %d's own figures", i+1)
		assert.Equal(t, geminiModel, usages[i].Model, "turn %d", i+1)
	}
	assert.Empty(t, sess.Capabilities().Gaps(), "token counts stays delivered")
	assert.Len(t, srv.ModelCalls(), 2, srv.Describe())
	assert.NotContains(t, r.shape(), gapNotice(domain.CapTokenCounts), "no gap notice")

	// The source's directory is removed at session end.
	r.stop(sess)
	assert.Empty(t, telemetryDirs(t, r))
	return waits
}

// readLines are the source's Debug records of what it read.
func readLines(r *rig) []string {
	var out []string
	for _, line := range strings.Split(r.logs.String(), "\n") {
		if strings.Contains(line, "gemini telemetry read") || strings.Contains(line, "gemini session journal read") {
			out = append(out, line)
		}
	}
	return out
}

// TestUsageGeminiTelemetry: the figures come from the telemetry outfile
// alone (the source reads no journal: its home is empty), each turn's
// wait ending when Gemini CLI's next log batch lands (about 5 s).
func TestUsageGeminiTelemetry(t *testing.T) {
	t.Parallel()
	r, srv := geminiRig(t, true)
	r.readTimeout = geminiUsageReadTimeout
	usageTwoTurns(t, r, srv, t.TempDir(), passAppendedEnv)
	lines := readLines(r)
	for _, l := range lines {
		t.Log(l)
	}
	require.Len(t, lines, 2, "the outfile answered both turns; the journal was not needed")
	for _, l := range lines {
		assert.Contains(t, l, "settled=true measured=true")
	}
}

// TestUsageGeminiJournal: the telemetry settings do not reach the runtime
// (the rig's `env -i` drops them), so the outfile never catches up within
// the bound; the session journal under the runtime's HOME answers.
func TestUsageGeminiJournal(t *testing.T) {
	t.Parallel()
	r, srv := geminiRig(t, true)
	r.readTimeout = 2 * time.Second
	usageTwoTurns(t, r, srv, r.home)
	lines := readLines(r)
	for _, l := range lines {
		t.Log(l)
	}
	require.Len(t, lines, 4)
	assert.Contains(t, lines[0], "settled=false measured=false")
	assert.Contains(t, lines[1], "measured=true")
}
