package app_test

import (
	"context"
	"errors"
	"testing"

	"github.com/golang/mock/gomock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/sysclock"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/eventrec"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/ports/mocks"
)

// TestStartWithMockedLauncher checks, with the generated mocks, how Start
// treats what a launcher returns: an AgentError keeps its kind, any other
// error is a port_exit, and the request carries the command and workspace.
func TestStartWithMockedLauncher(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		prepareErr error // from Prepare
		startErr   error // from Plan.Start, when Prepare succeeds
		kind       domain.ErrorKind
		message    string
	}{
		{name: "prepare: agent error kept", prepareErr: domain.NewError(domain.KindAgentNotFound, "no such runtime"),
			kind: domain.KindAgentNotFound, message: "no such runtime"},
		{name: "prepare: plain error wrapped", prepareErr: errors.New("lookup failed"),
			kind: domain.KindPortExit, message: "failed to start subprocess"},
		{name: "start: agent error kept", startErr: domain.NewError(domain.KindPortExit, "failed to create stdout pipe"),
			kind: domain.KindPortExit, message: "failed to create stdout pipe"},
		{name: "start: plain error wrapped", startErr: errors.New("fork: resource temporarily unavailable"),
			kind: domain.KindPortExit, message: "failed to start subprocess"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctrl := gomock.NewController(t)
			workspace := t.TempDir()
			launcher := mocks.NewMockLauncher(ctrl)
			req := ports.LaunchRequest{Command: []string{"runtime", "--acp"}, Workspace: workspace}
			if c.prepareErr != nil {
				launcher.EXPECT().Prepare(req).Return(nil, c.prepareErr)
			} else {
				plan := mocks.NewMockPlan(ctrl)
				launcher.EXPECT().Prepare(req).Return(plan, nil)
				plan.EXPECT().Target().Return(ports.Target{}).AnyTimes()
				plan.EXPECT().Start(gomock.Any(), gomock.Any()).Return(nil, c.startErr)
			}
			rec := &eventrec.Recorder{}
			cfg := domain.DefaultSessionSettings()
			cfg.Command = []string{"runtime", "--acp"}
			_, err := app.Start(context.Background(), app.Options{
				Settings: cfg, Workspace: workspace, Launcher: launcher, Clock: sysclock.Clock{}, OnEvent: rec.Add,
			})
			var ae *domain.AgentError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, c.kind, ae.Kind)
			assert.Equal(t, c.message, ae.Message)
			assert.Equal(t, []string{"startup_failed:" + c.message}, rec.Shape())
		})
	}
}

// TestStartNeverLaunchesAnEmptyCommand uses a mock that fails the test if
// the launcher is called at all.
func TestStartNeverLaunchesAnEmptyCommand(t *testing.T) {
	t.Parallel()
	for _, command := range [][]string{nil, {"  "}, {""}} {
		ctrl := gomock.NewController(t)
		launcher := mocks.NewMockLauncher(ctrl) // no EXPECT: any call fails
		cfg := domain.DefaultSessionSettings()
		cfg.Command = command
		rec := &eventrec.Recorder{}
		_, err := app.Start(context.Background(), app.Options{Settings: cfg, Workspace: "/", Launcher: launcher, Clock: sysclock.Clock{}, OnEvent: rec.Add})
		var ae *domain.AgentError
		require.ErrorAs(t, err, &ae, "command %q", command)
		assert.Equal(t, domain.KindAgentNotFound, ae.Kind)
		assert.Equal(t, domain.MsgEmptyCommand, ae.Message)
		assert.Equal(t, []string{"startup_failed:" + domain.MsgEmptyCommand}, rec.Shape())
	}
}

// TestStartRefusesAnInvalidConfiguration: settings Validate refuses are
// agent_not_found with the findings' text and a startup_failed event,
// before anything reaches the launcher.
func TestStartRefusesAnInvalidConfiguration(t *testing.T) {
	t.Parallel()
	ctrl := gomock.NewController(t)
	cfg := domain.DefaultSessionSettings()
	cfg.Command = []string{"runtime"}
	cfg.StopGrace = 0
	rec := &eventrec.Recorder{}
	// The mock launcher expects no call: nothing is launched.
	o := app.Options{Settings: cfg, Workspace: t.TempDir(), Launcher: mocks.NewMockLauncher(ctrl), OnEvent: rec.Add}
	sess, err := app.Start(context.Background(), o)
	require.Nil(t, sess)
	var ae *domain.AgentError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, domain.KindAgentNotFound, ae.Kind)
	assert.Equal(t, domain.MsgStopGraceNonPositive, ae.Message)
	require.Len(t, rec.All(), 1)
	assert.Equal(t, domain.EventStartupFailed, rec.All()[0].Type)
	assert.Equal(t, domain.MsgStopGraceNonPositive, rec.All()[0].Message)
}

// TestStartRefusesAProgrammersMistake: a missing port is an
// *app.OptionsError naming the field — not a runtime failure: no error
// kind, no startup_failed event, nothing launched.
func TestStartRefusesAProgrammersMistake(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		mutate func(*app.Options)
		field  string
	}{
		{"no launcher", func(o *app.Options) { o.Launcher = nil }, "Launcher"},
		{"confirmation without a beacon", func(o *app.Options) { o.Settings.ConfirmToolServers = true }, "ToolServerBeacon"},
		{"MCP configuration without a source", func(o *app.Options) { o.Settings.MCPConfigPath = "/mcp.json" }, "MCPSource"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctrl := gomock.NewController(t)
			cfg := domain.DefaultSessionSettings()
			cfg.Command = []string{"runtime"}
			rec := &eventrec.Recorder{}
			o := app.Options{Settings: cfg, Workspace: t.TempDir(), Launcher: mocks.NewMockLauncher(ctrl), OnEvent: rec.Add}
			c.mutate(&o)
			sess, err := app.Start(context.Background(), o)
			require.Nil(t, sess)
			var oe *app.OptionsError
			require.ErrorAs(t, err, &oe)
			assert.Equal(t, c.field, oe.Field)
			_, hasKind := domain.KindOf(err)
			assert.False(t, hasKind, "a programmer's mistake carries no error kind: %v", err)
			assert.Empty(t, rec.All())
		})
	}
}

// TestRemoteSettingsRefuseALocalLauncher: settings written for SSH hosts
// handed a launcher that runs the runtime on this machine are refused
// before anything starts (the plan is prepared, never started).
func TestRemoteSettingsRefuseALocalLauncher(t *testing.T) {
	t.Parallel()
	ctrl := gomock.NewController(t)
	launcher := mocks.NewMockLauncher(ctrl)
	plan := mocks.NewMockPlan(ctrl)
	launcher.EXPECT().Prepare(gomock.Any()).Return(plan, nil)
	plan.EXPECT().Target().Return(ports.Target{}).AnyTimes()
	cfg := domain.DefaultSessionSettings()
	cfg.Command = []string{"runtime"}
	cfg.Hosts = []string{"build-7"}
	rec := &eventrec.Recorder{}
	sess, err := app.Start(context.Background(), app.Options{Settings: cfg, Workspace: t.TempDir(), Launcher: launcher, OnEvent: rec.Add})
	require.Nil(t, sess)
	var oe *app.OptionsError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, "Launcher", oe.Field)
	assert.Contains(t, err.Error(), "Settings.Hosts")
}

// TestStartCancelledBeforeTheLaunch: a ctx already done launches nothing.
func TestStartCancelledBeforeTheLaunch(t *testing.T) {
	t.Parallel()
	ctrl := gomock.NewController(t)
	cfg := domain.DefaultSessionSettings()
	cfg.Command = []string{"runtime"}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := &eventrec.Recorder{}
	_, err := app.Start(ctx, app.Options{Settings: cfg, Workspace: t.TempDir(), Launcher: mocks.NewMockLauncher(ctrl), Clock: sysclock.Clock{}, OnEvent: rec.Add})
	var ae *domain.AgentError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, domain.KindTurnCancelled, ae.Kind)
	assert.Equal(t, "session start cancelled", ae.Message)
	assert.Equal(t, []string{"startup_failed:session start cancelled"}, rec.Shape())
}

// TestTheInProcessLauncherNeedsNoCommand: a launcher that declares it
// needs no command (adapters/inprocess) starts a session whose settings
// name none; every other launcher is never handed one
// (TestStartNeverLaunchesAnEmptyCommand).
func TestTheInProcessLauncherNeedsNoCommand(t *testing.T) {
	t.Parallel()
	o, _, _, _ := agentOptions(t, []string{"--scenario", "echo"})
	o.Settings.Command = nil
	o.Clock = nil
	s, err := app.Start(context.Background(), o)
	require.NoError(t, err)
	res := s.Turn(context.Background(), "hello")
	assert.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	require.NoError(t, s.Stop(context.Background()))
}
