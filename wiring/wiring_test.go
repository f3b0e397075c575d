package wiring_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/fx"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/wiring"
)

func TestValidateApp(t *testing.T) {
	require.NoError(t, fx.ValidateApp(wiring.Options(nil, wiring.LocalSettings{}),
		fx.Invoke(func(ports.Launcher, ports.Clock, ports.MCPSource, app.CreationStore) {})))
}

func TestResolve(t *testing.T) {
	deps, err := wiring.Resolve(nil, wiring.LocalSettings{Contain: true})
	require.NoError(t, err)
	require.NotNil(t, deps.Launcher)
	require.NotNil(t, deps.Clock)
	require.NotNil(t, deps.Logger)
	require.NotNil(t, deps.MCPSource)
	require.NotNil(t, deps.Creations)
	var shipped []string
	for _, src := range deps.MeasurementSources {
		shipped = append(shipped, src.Name())
	}
	assert.ElementsMatch(t, []string{"gemini_telemetry", "claude_transcript", "codex_rollout", "qwen_chats", "copilot_events"}, shipped)
	var o app.Options
	deps.Apply(&o)
	assert.Same(t, deps.Logger, o.Logger)
}

// vendorSource is what a vendor writes: a type implementing the port.
type vendorSource struct{ name string }

func (v vendorSource) Name() string                                 { return v.name }
func (vendorSource) RuntimeName() string                            { return "vendor-runtime" }
func (vendorSource) Claims([]string) bool                           { return false }
func (vendorSource) Arm(context.Context) (ports.Measurement, error) { return nil, nil }

type countingObserver struct{ n *int }

func (c countingObserver) Observe(domain.Event) { *c.n++ }

// TestVendorSourcesJoinTheGroup adds two measurement sources and an
// observer through the value groups, without touching app/.
func TestVendorSourcesJoinTheGroup(t *testing.T) {
	n := 0
	deps, err := wiring.Resolve(nil, wiring.LocalSettings{},
		wiring.MeasurementSource(func() vendorSource { return vendorSource{"a"} }),
		wiring.MeasurementSource(func() *vendorSource { return &vendorSource{"b"} }),
		wiring.Observer(func() countingObserver { return countingObserver{&n} }),
	)
	require.NoError(t, err)
	var names []string
	for _, s := range deps.MeasurementSources {
		names = append(names, s.Name())
	}
	assert.Subset(t, names, []string{"a", "b"})
	assert.Len(t, names, 7, "the five shipped sources and the vendor's two")
	require.Len(t, deps.Observers, 1)
	deps.Observers[0].Observe(domain.Event{})
	assert.Equal(t, 1, n)
}

// TestNewResultServerDefault: without a command the result tool is served
// from this process over HTTP to a runtime that takes it, and not served
// to one that does not; with a command it is the stdio server, as the
// CLI's (docs/behaviour.md#structured-results).
func TestNewResultServerDefault(t *testing.T) {
	schema := json.RawMessage(`{"type":"object"}`)
	cases := []struct {
		name    string
		command []string
		takes   ports.MCPTransports
		want    domain.MCPTransport
		err     error
	}{
		{"library, http taken", nil, ports.MCPTransports{HTTP: true}, domain.MCPHTTP, nil},
		{"library, http not taken", nil, ports.MCPTransports{}, "", ports.ErrResultNotServed},
		{"cli", []string{"/bin/true"}, ports.MCPTransports{HTTP: true}, domain.MCPStdio, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := wiring.NewResultServer(slog.New(slog.DiscardHandler), wiring.LocalSettings{ResultCommand: c.command})
			a, err := rs.Arm(context.Background(), schema, c.takes)
			if c.err != nil {
				require.ErrorIs(t, err, c.err)
				return
			}
			require.NoError(t, err)
			defer func() { require.NoError(t, a.Release()) }()
			assert.Equal(t, c.want, a.Server().Transport)
		})
	}
}
