// Package otelobserve traces and measures acpdrive sessions on the
// OpenTelemetry Go API (docs/behaviour.md#observability). It implements
// ports.SessionObserver: add it to app.Options.Observers, or through fx
// with wiring.OpenTelemetry.
//
// A session is one span ("acpdrive.session") from before the launch to
// the end of its teardown, with the runtime's name and version, the route
// taken and the capability gaps. Its children are the start-up steps
// ("acpdrive.start.launch", "acpdrive.start.initialize",
// "acpdrive.start.session/new" or the continuation, "acpdrive.start.restart"
// holding the first start's teardown), one "acpdrive.turn" per turn (a
// client span whose W3C trace context goes into the prompt's `_meta`), each
// holding its "acpdrive.tool_call" spans, and "acpdrive.teardown" with one
// child per teardown step. Notices and malformed lines are span events.
// The agent's own text is never recorded.
//
// The package imports only the OpenTelemetry API: the caller chooses the
// SDK and the exporters (the acpdrive CLI exports over OTLP/HTTP when the
// standard OTEL_EXPORTER_OTLP_* variables are set).
package otelobserve
