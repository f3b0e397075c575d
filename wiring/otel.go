package wiring

import (
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/fx"

	"github.com/acpdrive/acpdrive/adapters/otelobserve"
	"github.com/acpdrive/acpdrive/ports"
)

// OpenTelemetry adds the OpenTelemetry observer (adapters/otelobserve) to
// the "observers" value group: every session is traced with tp and
// measured with mp (docs/behaviour.md#observability). A nil provider is
// the API's no-op one. The caller owns the providers: it flushes and shuts
// them down after its sessions ended.
func OpenTelemetry(tp trace.TracerProvider, mp metric.MeterProvider) fx.Option {
	return Observer(func() (ports.Observer, error) { return NewOpenTelemetryObserver(tp, mp) })
}

// NewOpenTelemetryObserver builds the OpenTelemetry observer without fx.
func NewOpenTelemetryObserver(tp trace.TracerProvider, mp metric.MeterProvider) (ports.Observer, error) {
	o, err := otelobserve.New(tp, mp)
	if err != nil {
		return nil, err
	}
	return o, nil
}
