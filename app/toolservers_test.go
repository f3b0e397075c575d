package app_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang/mock/gomock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/localexec"
	"github.com/acpdrive/acpdrive/adapters/mcpbeacon"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/fakeclock"
	"github.com/acpdrive/acpdrive/internal/testsupport/mcpstarter"
	"github.com/acpdrive/acpdrive/ports/mocks"
)

// runHelper runs this test binary as a helper process when its first
// argument names one: the fake runtime that starts the declared stdio
// servers (internal/testsupport/mcpstarter), or the tool-server beacon itself.
func runHelper() (int, bool) {
	if len(os.Args) < 2 {
		return 0, false
	}
	switch os.Args[1] {
	case mcpstarter.Subcommand:
		return mcpstarter.Main(os.Args[2:], os.Stdin, os.Stdout, os.Stderr), true
	case mcpbeacon.SubcommandName:
		return mcpbeacon.Main(context.Background(), os.Args[2:], os.Stdin, os.Stdout, os.Stderr), true
	}
	return 0, false
}

// withConfirmation asks for the tool-server confirmation, the beacon being
// this test binary.
func withConfirmation(bound time.Duration) option {
	return func(o *app.Options) {
		o.Settings.ConfirmToolServers = true
		o.Settings.ConfirmToolServersTimeout = bound
		o.ToolServerBeacon = mcpbeacon.New(mcpbeacon.Options{Command: []string{os.Args[0], mcpbeacon.SubcommandName}, Logger: o.Logger})
	}
}

// starterOptions are the options of a session on the fake runtime that
// starts the declared stdio servers, as a real process; the runtime logs
// the servers it started to the returned path.
func starterOptions(t *testing.T, args []string, opts ...option) (app.Options, string) {
	t.Helper()
	starterLog := filepath.Join(t.TempDir(), "starter.log")
	o, _, _ := baseOptions(t, opts...)
	o.Settings.Command = append([]string{os.Args[0], mcpstarter.Subcommand, "--log", starterLog}, args...)
	o.Launcher = localexec.New(localexec.Options{})
	return o, starterLog
}

func startStarter(t *testing.T, args []string, opts ...option) (*harness, string) {
	t.Helper()
	o, rec, logs := baseOptions(t, opts...)
	so, starterLog := starterOptions(t, args, opts...)
	o.Settings.Command, o.Launcher = so.Settings.Command, so.Launcher
	return startWith(t, o, rec, logs, ""), starterLog
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

func TestToolServersConfirmedWhenTheRuntimeStartsTheBeacon(t *testing.T) {
	// Not parallel: its real processes run before the parallel tests,
	// whose bounds they would otherwise crowd.
	// The bound is long: a confirmation never waits for it.
	h, starterLog := startStarter(t, nil, withConfirmation(time.Hour))

	caps := h.sess.Capabilities()
	assert.Equal(t, domain.CapProtocol, caps.State(domain.CapToolServers))
	assert.True(t, caps.Confirmed(domain.CapToolServers))
	raw, err := json.Marshal(caps)
	require.NoError(t, err)
	assert.Contains(t, string(raw), `{"label":"tool servers","state":"protocol","confirmed":true}`)
	assert.Equal(t, &domain.ToolServerCheck{
		Confirmed: true,
		MCPClient: mcpstarter.MCPClientName + "/" + mcpstarter.MCPClientVersion,
		BoundMS:   time.Hour.Milliseconds(),
	}, h.sess.AgentInfo().ToolServers)
	assert.Equal(t, "started "+domain.BeaconServerName+"\n", readFile(t, starterLog))

	res := h.turn("hello")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	for _, ev := range h.rec.OfType(domain.EventNotification) {
		assert.NotContains(t, ev.Message, domain.MsgToolServersNotConfirmedPrefix)
		assert.NotContains(t, ev.Message, string(domain.CapToolServers))
	}
	// Cleanup stops the session and checks that nothing of the runtime's
	// process group, the beacon included, survives; the socket goes too.
	socket := filepath.Dir(beaconSocket(t, h))
	h.stop()
	_, err = os.Stat(socket)
	assert.True(t, os.IsNotExist(err), "the beacon's directory is removed at teardown")
}

// beaconSocket reads the socket path from the session's log.
func beaconSocket(t *testing.T, h *harness) string {
	t.Helper()
	for _, line := range strings.Split(h.logs.String(), "\n") {
		if strings.Contains(line, "tool-server beacon armed") {
			_, after, _ := strings.Cut(line, "socket=")
			return strings.Fields(after)[0]
		}
	}
	t.Error("no beacon armed")
	return ""
}

func TestToolServersNotConfirmedOnTheReferenceAgent(t *testing.T) {
	t.Parallel()
	clock := fakeclock.New(epoch)
	bound := 7 * time.Second
	h := start(t, nil, withClock(clock), withConfirmation(bound))

	// The beacon is declared on session/new, last, as a stdio server.
	servers := declared(t, h.agentLg, "session/new")
	require.Len(t, servers, 1)
	beacon := servers[0]
	assert.Equal(t, domain.BeaconServerName, beacon["name"])
	assert.Equal(t, os.Args[0], beacon["command"])
	assert.Equal(t, []any{mcpbeacon.SubcommandName}, beacon["args"])
	env := beacon["env"].([]any)
	require.Len(t, env, 2)
	assert.Equal(t, mcpbeacon.EnvSocket, env[0].(map[string]any)["name"])
	assert.Equal(t, mcpbeacon.EnvToken, env[1].(map[string]any)["name"])

	notice := domain.ToolServersNotConfirmed(bound)
	assert.Equal(t, domain.CapGap, h.sess.Capabilities().State(domain.CapToolServers))
	assert.False(t, h.sess.Capabilities().Confirmed(domain.CapToolServers))
	assert.Equal(t, &domain.ToolServerCheck{BoundMS: bound.Milliseconds(), Reason: notice}, h.sess.AgentInfo().ToolServers)
	assert.Contains(t, h.logs.String(), `msg="tool servers not confirmed"`)

	res := h.turn("hello")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.Equal(t, []string{
		"session_started:session started",
		"notification:" + domain.MsgCapabilityGapNotice + "tool servers, token counts, session continuation",
		"notification:" + notice,
	}, h.rec.Shape()[:3], "the notice saying why comes before the first turn's prompt")

	h.rec.Reset()
	res = h.turn("again")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	for _, ev := range h.rec.OfType(domain.EventNotification) {
		assert.NotEqual(t, notice, ev.Message, "the notice is once per session")
	}
}

func TestToolServerNoticeText(t *testing.T) {
	assert.Equal(t,
		`tool servers not confirmed: the runtime did not start the stdio MCP server "acpdrive-beacon" that acpdrive declared beside the session's own and complete its MCP initialize within 15s of the session's creation, so the declared MCP servers are probably not running either`,
		domain.ToolServersNotConfirmed(domain.DefaultConfirmToolServersTimeout))
}

// A runtime that starts its MCP servers only at the first prompt misses
// the bound: the verdict is reached before the first turn and stands.
func TestToolServersStartedLazilyAreNotConfirmed(t *testing.T) {
	// Not parallel: its real processes run before the parallel tests,
	// whose bounds they would otherwise crowd.
	h, starterLog := startStarter(t, []string{"--lazy"}, withConfirmation(300*time.Millisecond))
	assert.Equal(t, domain.CapGap, h.sess.Capabilities().State(domain.CapToolServers))
	assert.Empty(t, readFile(t, starterLog), "nothing started before the prompt")

	res := h.turn("hello")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.Equal(t, "started "+domain.BeaconServerName+"\n", readFile(t, starterLog), "the runtime started it at the prompt")
	assert.Equal(t, domain.CapGap, h.sess.Capabilities().State(domain.CapToolServers), "a capability is never raised")
	assert.False(t, h.sess.AgentInfo().ToolServers.Confirmed)
	notices := []string{}
	for _, ev := range h.rec.OfType(domain.EventNotification) {
		notices = append(notices, ev.Message)
	}
	assert.Contains(t, notices, domain.ToolServersNotConfirmed(300*time.Millisecond))
}

// A runtime that exits before starting the beacon ends the wait at once:
// the bound (an hour here) is not waited out.
func TestToolServersNotConfirmedWhenTheRuntimeExits(t *testing.T) {
	// Not parallel: its real processes run before the parallel tests,
	// whose bounds they would otherwise crowd.
	h, starterLog := startStarter(t, []string{"--lazy", "--exit-after-new"}, withConfirmation(time.Hour))
	assert.Equal(t, &domain.ToolServerCheck{BoundMS: time.Hour.Milliseconds(), Reason: domain.ToolServersNotConfirmed(time.Hour)}, h.sess.AgentInfo().ToolServers)
	assert.Equal(t, domain.CapGap, h.sess.Capabilities().State(domain.CapToolServers))
	assert.Empty(t, readFile(t, starterLog))
	res := h.turn("hello")
	assert.Equal(t, domain.OutcomeFailed, res.Outcome, "the turn reports the runtime's exit")
}

func TestToolServersOfSeveralSessionsAreConfirmedApart(t *testing.T) {
	// Not parallel: its real processes run before the parallel tests,
	// whose bounds they would otherwise crowd.
	const n = 3
	var wg sync.WaitGroup
	sockets := make([]string, n)
	for i := range n {
		wg.Go(func() {
			o, rec, logs := baseOptions(t, withConfirmation(time.Hour))
			so, _ := starterOptions(t, nil)
			o.Settings.Command, o.Launcher = so.Settings.Command, so.Launcher
			sess, err := app.Start(context.Background(), o)
			if !assert.NoError(t, err, logs.String()) {
				return
			}
			h := &harness{t: t, sess: sess, rec: rec, logs: logs, opts: o}
			assert.True(t, sess.Capabilities().Confirmed(domain.CapToolServers))
			sockets[i] = beaconSocket(t, h)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			assert.NoError(t, sess.Stop(ctx))
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, s := range sockets {
		seen[s] = true
	}
	assert.Len(t, seen, n, "every session listens on a socket of its own")
}

func TestToolServerBeaconAddsNothingUnasked(t *testing.T) {
	t.Parallel()
	ctrl := gomock.NewController(t)
	beacon := mocks.NewMockToolServerBeacon(ctrl) // no call expected
	h := start(t, nil, func(o *app.Options) { o.ToolServerBeacon = beacon })
	assert.Empty(t, declared(t, h.agentLg, "session/new"))
	assert.Nil(t, h.sess.AgentInfo().ToolServers)
	assert.False(t, h.sess.Capabilities().Confirmed(domain.CapToolServers))
}

func TestToolServerBeaconNeverReachesARemoteLaunch(t *testing.T) {
	t.Parallel()
	ctrl := gomock.NewController(t)
	beacon := mocks.NewMockToolServerBeacon(ctrl) // no call expected
	o, rec, logs, agentLog := agentOptions(t, nil, withConfirmation(time.Hour))
	o.ToolServerBeacon = beacon
	o.Launcher = &countingLauncher{inner: o.Launcher, remote: "build-host"}
	h := startWith(t, o, rec, logs, agentLog)
	assert.Empty(t, declared(t, h.agentLg, "session/new"))
	assert.Nil(t, h.sess.AgentInfo().ToolServers)
	assert.Equal(t, domain.CapGap, h.sess.Capabilities().State(domain.CapToolServers))
	res := h.turn("hello")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	for _, ev := range h.rec.OfType(domain.EventNotification) {
		assert.NotContains(t, ev.Message, domain.MsgToolServersNotConfirmedPrefix)
	}
}

func TestToolServerConfirmationRefusals(t *testing.T) {
	t.Parallel()
	t.Run("no beacon", func(t *testing.T) {
		o, _, _, _ := agentOptions(t, nil)
		o.Settings.ConfirmToolServers = true
		_, err := app.Start(context.Background(), o)
		var oe *app.OptionsError
		require.ErrorAs(t, err, &oe)
		assert.Equal(t, "ToolServerBeacon", oe.Field)
	})
	t.Run("a beacon that cannot be armed", func(t *testing.T) {
		o, _, _, _ := agentOptions(t, nil, withConfirmation(time.Hour))
		long := filepath.Join(t.TempDir(), strings.Repeat("d", 100))
		require.NoError(t, os.MkdirAll(long, 0o700))
		o.ToolServerBeacon = mcpbeacon.New(mcpbeacon.Options{Command: []string{"x"}, Dir: long})
		_, err := app.Start(context.Background(), o)
		require.ErrorIs(t, err, domain.KindPortExit)
		assert.Contains(t, err.Error(), "could not arm the tool-server beacon: beacon socket path")
	})
	t.Run("an operator server with the beacon's name", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "mcp.json")
		require.NoError(t, os.WriteFile(path, []byte(`{"mcpServers":{"acpdrive-beacon":{"command":"x"}}}`), 0o600))
		o, _, _, _ := agentOptions(t, nil, withConfirmation(time.Hour), withMCPPath(path))
		_, err := app.Start(context.Background(), o)
		require.ErrorIs(t, err, domain.KindResponseError)
		assert.Contains(t, err.Error(), `declares a server named "acpdrive-beacon", a name reserved for the tool-server beacon`)
	})
}

func TestProbeReportsTheToolServerVerdict(t *testing.T) {
	// Not parallel: its real processes run before the parallel tests,
	// whose bounds they would otherwise crowd.
	o, _ := starterOptions(t, nil, withConfirmation(time.Hour))
	report, err := app.Probe(context.Background(), o)
	require.NoError(t, err)
	require.NotNil(t, report.ToolServers)
	assert.True(t, report.ToolServers.Confirmed)
	assert.True(t, report.Capabilities.Confirmed(domain.CapToolServers))
	raw, err := json.Marshal(report)
	require.NoError(t, err)
	assert.Contains(t, string(raw), `"tool_servers":{"confirmed":true,"mcp_client":"acpdrive-mcpstarter/1","bound_ms":3600000}`)
}
