package otelobserve

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// ScopeName is the instrumentation scope of the tracer and the meter.
const ScopeName = "github.com/acpdrive/acpdrive/adapters/otelobserve"

// Observer traces and measures sessions on the OpenTelemetry API
// (docs/behaviour.md#observability). It implements ports.SessionObserver:
// app asks it for one observation per session start. It is safe for
// concurrent use by any number of sessions.
type Observer struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
	inst   instruments
}

var _ ports.SessionObserver = (*Observer)(nil)

// instruments are the metrics of docs/behaviour.md#observability.
type instruments struct {
	turns     metric.Int64Counter
	toolCalls metric.Int64Counter
	tokens    metric.Int64Counter
	start     metric.Float64Histogram
	teardown  metric.Float64Histogram
	running   metric.Int64UpDownCounter
	spendInstruments
}

// New returns an Observer that creates its spans with tp and its
// instruments with mp; a nil provider is the API's no-op one. The trace
// context put into a prompt's `_meta` is the W3C one (traceparent,
// tracestate). The error is a meter that refused an instrument.
func New(tp trace.TracerProvider, mp metric.MeterProvider) (*Observer, error) {
	if tp == nil {
		tp = tracenoop.NewTracerProvider()
	}
	if mp == nil {
		mp = metricnoop.NewMeterProvider()
	}
	m := mp.Meter(ScopeName)
	var inst instruments
	var errs []error
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	histogram := func(name, desc string) metric.Float64Histogram {
		h, err := m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc))
		errs = append(errs, err)
		return h
	}
	inst.turns = counter(MetricTurns, "{turn}", "Turns that ended, by outcome.")
	inst.toolCalls = counter(MetricToolCalls, "{call}", "Tool calls that reached completed or failed, by kind and error.")
	inst.tokens = counter(MetricTokens, "{token}", "Measured tokens, by model and kind.")
	inst.start = histogram(MetricStartDuration, "Duration of a session start, from before the launch to a kept session or a failure.")
	inst.teardown = histogram(MetricTeardownDuration, "Duration of a session teardown.")
	running, err := m.Int64UpDownCounter(MetricSessionsRunning, metric.WithUnit("{session}"),
		metric.WithDescription("Sessions started and not yet torn down."))
	inst.running = running
	var spendErr error
	inst.spendInstruments, spendErr = newSpendInstruments(m)
	if err := errors.Join(append(errs, err, spendErr)...); err != nil {
		return nil, err
	}
	return &Observer{
		tracer: tp.Tracer(ScopeName),
		prop:   propagation.TraceContext{},
		inst:   inst,
	}, nil
}

// Observe ignores the event: app hands a session's events to the
// observation ObserveSession returned, never to the Observer itself.
func (o *Observer) Observe(domain.Event) {}

// ObserveSession opens the session span at at, as a child of the span in
// ctx when there is one (the caller's trace), and returns the observation
// that carries the rest of the session.
func (o *Observer) ObserveSession(ctx context.Context, at time.Time) ports.SessionObservation {
	ctx, span := o.tracer.Start(context.WithoutCancel(ctx), SpanSession,
		trace.WithTimestamp(at), trace.WithSpanKind(trace.SpanKindInternal))
	return &session{o: o, ctx: ctx, span: span, began: at}
}
