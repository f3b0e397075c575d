package otelobserve_test

import (
	"context"
	"fmt"
	"sort"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/acpdrive/acpdrive/adapters/inprocess"
	"github.com/acpdrive/acpdrive/adapters/otelobserve"
	"github.com/acpdrive/acpdrive/adapters/sysclock"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// ExampleNew traces a session of one turn with tool calls on the
// reference agent (served in this process) and prints the session span's
// children and the number of tool call spans of the turn. A program
// passes its SDK's providers, or those of its exporters.
func ExampleNew() {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	obs, err := otelobserve.New(tp, nil) // nil: no metrics
	if err != nil {
		fmt.Println(err)
		return
	}

	cfg := domain.DefaultSessionSettings()
	cfg.Command = []string{"acpdrive-agent"}
	sess, err := app.Start(context.Background(), app.Options{
		Settings:  cfg,
		Workspace: "/",
		Launcher:  inprocess.New(),
		Clock:     sysclock.Clock{},
		Observers: []ports.Observer{obs},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	res := sess.Turn(context.Background(), "#tools")
	_ = sess.Stop(context.Background())
	fmt.Println("turn:", res.Outcome)

	spans := rec.Ended()
	var session sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == otelobserve.SpanSession {
			session = s
		}
	}
	var children []sdktrace.ReadOnlySpan
	tools := 0
	for _, s := range spans {
		switch {
		case s.Parent().SpanID() == session.SpanContext().SpanID():
			children = append(children, s)
		case s.Name() == otelobserve.SpanToolCall:
			tools++
		}
	}
	sort.SliceStable(children, func(i, j int) bool { return children[i].StartTime().Before(children[j].StartTime()) })
	for _, c := range children {
		fmt.Println(c.Name())
	}
	fmt.Println("tool calls:", tools)
	// Output:
	// turn: turn_completed
	// acpdrive.start.launch
	// acpdrive.start.initialize
	// acpdrive.start.session/new
	// acpdrive.turn
	// acpdrive.teardown
	// tool calls: 11
}
