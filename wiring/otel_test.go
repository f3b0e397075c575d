package wiring_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/wiring"
)

// TestOpenTelemetryJoinsObservers: the option puts one session observer
// into the group, and it records on the provider it was given.
func TestOpenTelemetryJoinsObservers(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer func() { require.NoError(t, tp.Shutdown(context.Background())) }()
	deps, err := wiring.Resolve(nil, wiring.LocalSettings{}, wiring.OpenTelemetry(tp, nil))
	require.NoError(t, err)
	require.Len(t, deps.Observers, 1)
	so, ok := deps.Observers[0].(ports.SessionObserver)
	require.True(t, ok, "the OpenTelemetry observer follows sessions one by one")
	at := time.Now()
	obs := so.ObserveSession(context.Background(), at)
	obs.Ended(ports.SessionEnd{At: at.Add(time.Millisecond)})
	require.Len(t, rec.Ended(), 1)
	assert.Equal(t, "acpdrive.session", rec.Ended()[0].Name())
}
