package app_test

import (
	"context"
	"errors"
	"testing"

	"github.com/golang/mock/gomock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/eventrec"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/ports/mocks"
)

// TestStartWithMockedLauncher checks, with the generated mocks, how Start
// treats what a launcher returns: an AgentError keeps its kind, any other
// error is a port_exit, and the request carries the command and workspace.
func TestStartWithMockedLauncher(t *testing.T) {
	cases := []struct {
		name    string
		err     error
		kind    domain.ErrorKind
		message string
	}{
		{"agent error kept", domain.NewError(domain.KindAgentNotFound, "no such runtime"), domain.KindAgentNotFound, "no such runtime"},
		{"plain error wrapped", errors.New("fork: resource temporarily unavailable"), domain.KindPortExit, "failed to start subprocess"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctrl := gomock.NewController(t)
			launcher := mocks.NewMockLauncher(ctrl)
			launcher.EXPECT().
				Launch(gomock.Any(), ports.LaunchRequest{Command: []string{"runtime", "--acp"}, Workspace: "/work"}).
				Return(nil, c.err)
			rec := &eventrec.Recorder{}
			cfg := domain.DefaultConfig()
			cfg.Command = []string{"runtime", "--acp"}
			_, err := app.Start(context.Background(), app.Options{Config: cfg, Workspace: "/work", Launcher: launcher, OnEvent: rec.Add})
			var ae *domain.AgentError
			require.ErrorAs(t, err, &ae)
			assert.Equal(t, c.kind, ae.Kind)
			assert.Equal(t, c.message, ae.Message)
			require.Len(t, rec.All(), 1)
			assert.Equal(t, domain.EventStartupFailed, rec.All()[0].Type)
		})
	}
}

// TestStartNeverLaunchesAnEmptyCommand uses a mock that fails the test if
// Launch is called at all.
func TestStartNeverLaunchesAnEmptyCommand(t *testing.T) {
	ctrl := gomock.NewController(t)
	launcher := mocks.NewMockLauncher(ctrl) // no EXPECT: any call fails
	_, err := app.Start(context.Background(), app.Options{Workspace: "/", Launcher: launcher})
	require.ErrorIs(t, err, domain.KindAgentNotFound)
	assert.Contains(t, err.Error(), domain.MsgEmptyCommand)
}
