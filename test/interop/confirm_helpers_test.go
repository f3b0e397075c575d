//go:build interop

package interop

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/mcpbeacon"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// The tool-server confirmation against real runtimes
// (docs/behaviour.md#tool-server-confirmation): acpdrive declares its own
// beacon (the CLI binary's hidden mcp-beacon subcommand) beside the
// session's servers and watches whether the runtime starts it and
// completes MCP initialize within the default bound. Each runtime's case
// is a confirmCase run through the library and the CLI; a new runtime (the
// Copilot CLI, say) only needs its rig, its reply and its expected verdict.

// confirmCase is one runtime's tool-server confirmation scenario.
type confirmCase struct {
	// rig makes a fresh rig on the runtime, its fake model server
	// scripted by the caller with one text reply.
	rig func(t *testing.T) (*rig, *fakes.Server)
	// reply is the text of that reply.
	reply string
	// confirmed is the verdict the runtime must reach.
	confirmed bool
	// mcpClient is the name/version its MCP client gives the beacon, when
	// confirmed ("" asserts only that one was given).
	mcpClient string
	// gaps are the runtime's capability gaps other than tool servers.
	gaps []domain.CapabilityLabel
	// usage is the reply's usage figures.
	usage fakes.Usage
	// wireUsage: the runtime's prompt results carry usage, so the
	// protocol measures the turn and token counts is no gap by the run's
	// end (docs/behaviour.md#token-accounting); the first turn's notice
	// still names it.
	wireUsage bool
	// hidden are strings the first model request must not contain: the
	// beacon adds nothing to what the model is offered.
	hidden []string
	// turn, when set, replaces the first turn's events after the notices
	// (default: one streamed text reply, then turn_completed), for a
	// runtime that reports its reply another way.
	turn []string
}

// withConfirmation asks for the tool-server confirmation with the default
// bound; the beacon is the acpdrive binary's mcp-beacon subcommand.
func withConfirmation(t *testing.T) optFn {
	bin := testbin.Path(t)
	return func(o *app.Options) {
		o.Settings.ConfirmToolServers = true
		o.ToolServerBeacon = mcpbeacon.New(mcpbeacon.Options{Command: []string{bin, mcpbeacon.SubcommandName}, Logger: o.Logger})
	}
}

// expectedGaps is the capability record's gap list for the verdict.
func (c confirmCase) expectedGaps() []domain.CapabilityLabel {
	var out []domain.CapabilityLabel
	for _, l := range domain.CapabilityOrder {
		if l == domain.CapToolServers && !c.confirmed || slices.Contains(c.gaps, l) {
			out = append(out, l)
		}
	}
	return out
}

// expectedShape is the first turn's event sequence.
func (c confirmCase) expectedShape() []string {
	want := []string{started, gapNotice(c.expectedGaps()...)}
	if !c.confirmed {
		want = append(want, "notification:"+domain.ToolServersNotConfirmed(domain.DefaultConfirmToolServersTimeout))
	}
	if c.turn != nil {
		return append(want, c.turn...)
	}
	return append(want, "message_chunk*", "notification:"+c.reply, "turn_completed")
}

func (c confirmCase) checkVerdict(t *testing.T, check *domain.ToolServerCheck) {
	t.Helper()
	require.NotNil(t, check, "a confirmation was asked for")
	assert.Equal(t, c.confirmed, check.Confirmed, "the verdict")
	assert.Equal(t, domain.DefaultConfirmToolServersTimeout.Milliseconds(), check.BoundMS)
	if !c.confirmed {
		assert.Equal(t, domain.ToolServersNotConfirmed(domain.DefaultConfirmToolServersTimeout), check.Reason)
		return
	}
	assert.Empty(t, check.Reason)
	if c.mcpClient != "" {
		assert.Equal(t, c.mcpClient, check.MCPClient)
	} else {
		assert.NotEmpty(t, check.MCPClient)
	}
}

// run runs the case through the library and through the CLI.
func (c confirmCase) run(t *testing.T) {
	t.Run("library", func(t *testing.T) {
		t.Parallel() // its own rig: a "not confirmed" verdict's bound is waited out once for both
		r, srv := c.rig(t)
		srv.Script(fakes.TextReply(c.usage, c.reply))
		t0 := time.Now()
		sess := r.mustStart(withConfirmation(t))
		t.Logf("start with the confirmation took %s; verdict %+v", time.Since(t0).Round(time.Millisecond), *sess.AgentInfo().ToolServers)
		for _, line := range strings.Split(r.logs.String(), "\n") {
			if strings.Contains(line, `msg="tool servers confirmed"`) {
				t.Logf("after session/new: %s", line[strings.Index(line, "waited="):])
			}
		}
		c.checkVerdict(t, sess.AgentInfo().ToolServers)
		caps := sess.Capabilities()
		assert.Equal(t, c.expectedGaps(), caps.Gaps())
		assert.Equal(t, c.confirmed, caps.Confirmed(domain.CapToolServers))

		// The beacon went out on session/new, last, as a stdio server.
		servers := sessionNewMCPServers(t, r)
		require.NotEmpty(t, servers)
		beacon := servers[len(servers)-1]
		assert.Equal(t, domain.BeaconServerName, beacon["name"])
		assert.Equal(t, []any{mcpbeacon.SubcommandName}, beacon["args"])

		// The verdict is in before the first turn; the runtime's process
		// group, the beacon included, is gone after the stop.
		libraryTurn(t, r, sess, "say hello", completed, c.expectedShape())
		calls := srv.ModelCalls()
		require.NotEmpty(t, calls, srv.Describe())
		for _, h := range append([]string{"acpdrive-beacon", "acpdrive_beacon"}, c.hidden...) {
			assert.False(t, calls[0].BodyContains(h), "the model is offered nothing of the beacon: %q", h)
		}
	})
	t.Run("cli", func(t *testing.T) {
		t.Parallel() // its own rig
		r, srv := c.rig(t)
		srv.Script(fakes.TextReply(c.usage, c.reply))
		run := r.cliWith([]string{"--confirm-tool-servers"}, "say hello")
		require.Equal(t, 0, run.Code, run.Stderr)
		require.NotNil(t, run.Run)
		c.checkVerdict(t, run.Run.ToolServers)
		gaps := []string{}
		for _, l := range c.expectedGaps() {
			if !(c.wireUsage && l == domain.CapTokenCounts) {
				gaps = append(gaps, string(l))
			}
		}
		assert.Equal(t, gaps, run.Run.CapabilityGaps)
		assertShape(t, c.expectedShape(), run.shape(r))
		assert.Equal(t, !c.confirmed, strings.Contains(run.Stderr, `msg="tool servers not confirmed"`), "the Warn record")
	})
}
