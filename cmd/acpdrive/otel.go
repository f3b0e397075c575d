package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/fx"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/wiring"
)

// telemetryFlushBound bounds the flush and shutdown of the exporters
// before the CLI exits (docs/behaviour.md#observability): an unreachable
// collector delays the exit by at most this long.
const telemetryFlushBound = 5 * time.Second

// The standard OpenTelemetry environment variables the CLI reads; the
// exporters read the rest of OTEL_EXPORTER_OTLP_* themselves (headers,
// timeouts, TLS).
const (
	envEndpoint        = "OTEL_EXPORTER_OTLP_ENDPOINT"
	envTracesEndpoint  = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	envMetricsEndpoint = "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"
	envSDKDisabled     = "OTEL_SDK_DISABLED"
	envTracesExporter  = "OTEL_TRACES_EXPORTER"
	envMetricsExporter = "OTEL_METRICS_EXPORTER"
)

// telemetry is the CLI's OpenTelemetry export: a tracer provider and a
// meter provider exporting over OTLP/HTTP, each present only when its
// endpoint is configured.
type telemetry struct {
	tp *sdktrace.TracerProvider
	mp *sdkmetric.MeterProvider
}

// exportWanted reports whether a signal is exported: an endpoint is set
// for it (its own variable or the common one), the SDK is not disabled,
// and its exporter is not "none".
func exportWanted(getenv func(string) string, own, exporter string) bool {
	if strings.EqualFold(strings.TrimSpace(getenv(envSDKDisabled)), "true") ||
		strings.EqualFold(strings.TrimSpace(getenv(exporter)), "none") {
		return false
	}
	return strings.TrimSpace(getenv(envEndpoint)) != "" || strings.TrimSpace(getenv(own)) != ""
}

// newTelemetry sets up the export the environment asks for; with none of
// the endpoint variables set it sets up nothing and sends nothing.
func newTelemetry(ctx context.Context, getenv func(string) string, stderr io.Writer) (*telemetry, error) {
	t := &telemetry{}
	traces := exportWanted(getenv, envTracesEndpoint, envTracesExporter)
	metrics := exportWanted(getenv, envMetricsEndpoint, envMetricsExporter)
	if !traces && !metrics {
		return t, nil
	}
	// The SDK reports a failed export in the background through the global
	// handler; the CLI prints it as it prints a failed flush.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { reportExportError(stderr, err) }))
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "acpdrive"), attribute.String("service.version", app.Version)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win
	)
	if err != nil {
		return nil, fmt.Errorf("OpenTelemetry resource: %w", err)
	}
	if traces {
		exp, err := otlptracehttp.New(ctx)
		if err != nil {
			return nil, fmt.Errorf("OTLP trace exporter: %w", err)
		}
		t.tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	}
	if metrics {
		exp, err := otlpmetrichttp.New(ctx)
		if err != nil {
			t.shutdown(io.Discard)
			return nil, fmt.Errorf("OTLP metric exporter: %w", err)
		}
		t.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)), sdkmetric.WithResource(res))
	}
	return t, nil
}

// options adds the OpenTelemetry observer when anything is exported.
func (t *telemetry) options() []fx.Option {
	if t.tp == nil && t.mp == nil {
		return nil
	}
	var tp trace.TracerProvider
	var mp metric.MeterProvider
	if t.tp != nil {
		tp = t.tp
	}
	if t.mp != nil {
		mp = t.mp
	}
	return []fx.Option{wiring.OpenTelemetry(tp, mp)}
}

// shutdown flushes what is left and stops the exporters, bounded by
// telemetryFlushBound; a failure is reported on stderr and does not change
// the exit status.
func (t *telemetry) shutdown(stderr io.Writer) {
	if t.tp == nil && t.mp == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), telemetryFlushBound)
	defer cancel()
	if t.tp != nil {
		if err := t.tp.Shutdown(ctx); err != nil {
			reportExportError(stderr, fmt.Errorf("traces: %w", err))
		}
	}
	if t.mp != nil {
		if err := t.mp.Shutdown(ctx); err != nil {
			reportExportError(stderr, fmt.Errorf("metrics: %w", err))
		}
	}
}

// reportExportError prints one export failure on stderr.
func reportExportError(stderr io.Writer, err error) {
	fmt.Fprintf(stderr, "acpdrive: telemetry export: %v\n", err)
}

// telemetryFromEnv is newTelemetry on the process environment.
func telemetryFromEnv(ctx context.Context, stderr io.Writer) (*telemetry, error) {
	return newTelemetry(ctx, os.Getenv, stderr)
}
