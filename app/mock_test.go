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
			cfg := domain.DefaultConfig()
			cfg.Command = []string{"runtime", "--acp"}
			_, err := app.Start(context.Background(), app.Options{
				Config: cfg, Workspace: workspace, Launcher: launcher, Clock: sysclock.Clock{}, OnEvent: rec.Add,
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
		cfg := domain.DefaultConfig()
		cfg.Command = command
		rec := &eventrec.Recorder{}
		_, err := app.Start(context.Background(), app.Options{Config: cfg, Workspace: "/", Launcher: launcher, Clock: sysclock.Clock{}, OnEvent: rec.Add})
		var ae *domain.AgentError
		require.ErrorAs(t, err, &ae, "command %q", command)
		assert.Equal(t, domain.KindAgentNotFound, ae.Kind)
		assert.Equal(t, domain.MsgEmptyCommand, ae.Message)
		assert.Equal(t, []string{"startup_failed:" + domain.MsgEmptyCommand}, rec.Shape())
	}
}

// TestStartRefusesAnInvalidConfiguration: a configuration Validate refuses
// is a *domain.ConfigError before anything reaches the launcher.
func TestStartRefusesAnInvalidConfiguration(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		mutate  func(*app.Options)
		message string
		event   bool // a startup_failed event goes out (not without a clock)
	}{
		{"stop grace zero", func(o *app.Options) { o.Config.StopGrace = 0 }, domain.MsgStopGraceNonPositive, true},
		{"unsupported kind", func(o *app.Options) { o.Config.Kind = "codex" }, domain.KindUnsupportedMessage("codex"), true},
		{"no clock", func(o *app.Options) { o.Clock = nil }, "app.Options.Clock is required", false},
		{"no launcher", func(o *app.Options) { o.Launcher = nil }, "app.Options.Launcher is required", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctrl := gomock.NewController(t)
			cfg := domain.DefaultConfig()
			cfg.Command = []string{"runtime"}
			rec := &eventrec.Recorder{}
			o := app.Options{Config: cfg, Workspace: t.TempDir(), Launcher: mocks.NewMockLauncher(ctrl), Clock: sysclock.Clock{}, OnEvent: rec.Add}
			c.mutate(&o)
			sess, err := app.Start(context.Background(), o)
			require.Nil(t, sess)
			// A configuration that can never start is agent_not_found
			// (not retryable) with the findings' text, and nothing is
			// launched (the mock launcher expects no call).
			var ae *domain.AgentError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, domain.KindAgentNotFound, ae.Kind)
			assert.Equal(t, c.message, ae.Message)
			if c.event {
				require.Len(t, rec.All(), 1)
				assert.Equal(t, domain.EventStartupFailed, rec.All()[0].Type)
				assert.Equal(t, c.message, rec.All()[0].Message)
			} else {
				assert.Empty(t, rec.All())
			}
		})
	}
}

// TestStartCancelledBeforeTheLaunch: a ctx already done launches nothing.
func TestStartCancelledBeforeTheLaunch(t *testing.T) {
	t.Parallel()
	ctrl := gomock.NewController(t)
	cfg := domain.DefaultConfig()
	cfg.Command = []string{"runtime"}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := &eventrec.Recorder{}
	_, err := app.Start(ctx, app.Options{Config: cfg, Workspace: t.TempDir(), Launcher: mocks.NewMockLauncher(ctrl), Clock: sysclock.Clock{}, OnEvent: rec.Add})
	var ae *domain.AgentError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, domain.KindTurnCancelled, ae.Kind)
	assert.Equal(t, "session start cancelled", ae.Message)
	assert.Equal(t, []string{"startup_failed:session start cancelled"}, rec.Shape())
}
