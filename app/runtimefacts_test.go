package app_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
)

// The figures of the turns below, as the reference agent is told to
// report them: different, so a running total taken for a turn's figure
// fails the assertion.
const (
	firstUsage  = `{"inputTokens":100,"outputTokens":10,"totalTokens":110}`
	secondUsage = `{"inputTokens":40,"outputTokens":5,"totalTokens":45}`
)

var (
	firstFigure  = domain.Usage{InputTokens: 100, OutputTokens: 10, TotalTokens: 110}
	secondFigure = domain.Usage{InputTokens: 40, OutputTokens: 5, TotalTokens: 45}
	bothFigures  = domain.Usage{InputTokens: 140, OutputTokens: 15, TotalTokens: 155}
)

// runningTotalAgent is the reference agent reporting each session's
// running total of usage at every turn's end, under agentInfo.name name
// ("" keeps its own).
func runningTotalAgent(name string) []string {
	args := []string{"--scenario", "usage-running-total"}
	if name != "" {
		args = append(args, "--agent-name", name)
	}
	return args
}

// usageTurn is the prompt whose turn ends with usage (the turn's own
// figures; the agent reports them added to the session's total).
func usageTurn(usage string) string { return `#usage-wire {"usage":` + usage + `}` }

// turnUsage runs one turn and returns its usage.
func turnUsage(t *testing.T, s *app.Session, usage string) domain.Usage {
	t.Helper()
	res := s.Turn(context.Background(), usageTurn(usage))
	require.Nil(t, res.Err)
	require.NotNil(t, res.Usage)
	assert.Contains(t, []string{domain.SourcePromptResult, domain.SourceStateUpdate}, res.Source, "measured from the wire")
	return *res.Usage
}

// TestRunningTotalOnASharedProcess: whether a runtime's prompt result
// carries the session's running total is a fact of the runtime, found in
// the table of runtime facts by the handshake's agentInfo.name — here the
// reference agent announcing Copilot CLI's — so it holds for the sessions
// of a Host, which arms no measurement source: each turn's usage is the
// turn's own figure, never the session's total, and each session's total
// is its own (docs/behaviour.md#token-accounting, #runtime-host). On both
// protocol versions: v1's prompt result, v2's ending state_update.
func TestRunningTotalOnASharedProcess(t *testing.T) {
	t.Parallel()
	for _, v := range versions {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			o, _, logs, _ := agentOptions(t, append(runningTotalAgent("Copilot"), "--protocol", v.agent),
				withConfig(func(s *domain.SessionSettings) { s.Protocol = v.client }))
			h, err := app.NewHost(o, app.HostOptions{})
			require.NoError(t, err)
			defer func() { assert.NoError(t, h.Close(context.Background())) }()
			sessions, _ := hostSessions(t, h, o, 2)
			require.Len(t, h.Processes(), 1, "both sessions share one process")
			a, b := sessions[0], sessions[1]
			assert.Equal(t, "Copilot", a.AgentInfo().Name)
			assert.Equal(t, v.want, a.AgentInfo().ProtocolVersion)

			assert.Equal(t, firstFigure, turnUsage(t, a, firstUsage), logs.String())
			assert.Equal(t, secondFigure, turnUsage(t, a, secondUsage), "the second turn's own figure, not the session's total")
			assert.Equal(t, secondFigure, turnUsage(t, b, secondUsage), "another session's first turn: its own total only")
			assert.Equal(t, firstFigure, turnUsage(t, b, firstUsage), "that session's second turn")
			assert.Equal(t, bothFigures, a.Totals().Usage, "the session's totals sum the turns' own figures")
			assert.Equal(t, bothFigures, b.Totals().Usage)
		})
	}
}

// TestRunningTotalWithoutMeasurement: the fact holds on a session of its
// own given no measurement source at all (a library session, the CLI's
// --no-measure), and only for the runtime the table names: another
// runtime's usage is the turn's own as the protocol says. On both protocol
// versions.
func TestRunningTotalWithoutMeasurement(t *testing.T) {
	t.Parallel()
	for _, v := range versions {
		run := func(name string) *harness {
			return start(t, append(runningTotalAgent(name), "--protocol", v.agent), func(o *app.Options) {
				o.MeasurementSources = nil
				o.Settings.Protocol = v.client
			})
		}
		t.Run(v.name+"/the runtime the table names", func(t *testing.T) {
			t.Parallel()
			h := run("copilot")
			assert.Equal(t, firstFigure, turnUsage(t, h.sess, firstUsage))
			assert.Equal(t, secondFigure, turnUsage(t, h.sess, secondUsage), "the name is compared regardless of case")
		})
		t.Run(v.name+"/a runtime the table does not name", func(t *testing.T) {
			t.Parallel()
			h := run("")
			assert.Equal(t, firstFigure, turnUsage(t, h.sess, firstUsage))
			assert.Equal(t, bothFigures, turnUsage(t, h.sess, secondUsage), "taken as the turn's own")
		})
	}
}
