package wiring_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/fx"

	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/wiring"
)

func TestValidateApp(t *testing.T) {
	require.NoError(t, fx.ValidateApp(wiring.Options(nil), fx.Invoke(func(ports.Launcher, ports.Clock, ports.MCPRenderer) {})))
}

func TestResolve(t *testing.T) {
	deps, err := wiring.Resolve(nil)
	require.NoError(t, err)
	require.NotNil(t, deps.Launcher)
	require.NotNil(t, deps.Clock)
	require.NotNil(t, deps.Logger)
	require.NotNil(t, deps.MCPRenderer)
}
