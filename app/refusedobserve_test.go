package app_test

import (
	"context"
	"testing"

	"github.com/golang/mock/gomock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/eventrec"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/ports/mocks"
)

// TestRefusedSettingsReachObservers: settings Validate refuses are a
// startup_failed event for every observer's Observe as for OnEvent
// (docs/behaviour.md#observability: a plain observer receives every
// event); a session observer is asked for no observation, since nothing
// started.
func TestRefusedSettingsReachObservers(t *testing.T) {
	t.Parallel()
	cfg := domain.DefaultSessionSettings()
	cfg.Command = []string{"runtime"}
	cfg.StopGrace = 0
	onEvent := &eventrec.Recorder{}
	plain := &eventrec.Recorder{}
	sess := &sessionRecorder{}
	o := app.Options{
		Settings: cfg, Workspace: t.TempDir(), Launcher: mocks.NewMockLauncher(gomock.NewController(t)),
		OnEvent: onEvent.Add, Observers: []ports.Observer{observerFunc(plain.Add), sess},
	}
	_, err := app.Start(context.Background(), o)
	var ae *domain.AgentError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, domain.KindAgentNotFound, ae.Kind)
	want := []string{"startup_failed:" + ae.Message}
	assert.Equal(t, want, onEvent.Shape())
	assert.Equal(t, want, plain.Shape(), "a plain observer gets the refusal")
	sess.mu.Lock()
	defer sess.mu.Unlock()
	assert.Equal(t, 1, sess.direct, "a session observer gets it through Observe")
	assert.Empty(t, sess.sessions, "no session is observed")
}

// observerFunc is a plain ports.Observer.
type observerFunc func(domain.Event)

func (f observerFunc) Observe(ev domain.Event) { f(ev) }
