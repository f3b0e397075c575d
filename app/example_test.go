package app_test

import (
	"context"
	"fmt"

	"github.com/acpdrive/acpdrive/adapters/sysclock"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/inproc"
)

// ExampleStart runs one session of two turns on the reference agent, served
// in this process by a ports.Launcher (internal/testsupport/inproc) instead of a
// subprocess, and prints the normalized events that carry a message.
func ExampleStart() {
	cfg := domain.DefaultSessionSettings()
	cfg.Command = []string{"acpdrive-agent"} // the in-process launcher runs the reference agent whatever it is named
	sess, err := app.Start(context.Background(), app.Options{
		Settings:  cfg,
		Workspace: "/",
		Launcher:  inproc.New("--scenario", "echo"),
		Clock:     sysclock.Clock{},
		OnEvent: func(ev domain.Event) {
			if ev.Message != "" {
				fmt.Printf("%s: %s\n", ev.Type, ev.Message)
			}
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = sess.Stop(context.Background()) }()

	res := sess.Turn(context.Background(), "hello")
	fmt.Println("outcome:", res.Outcome, res.StopReason)
	res = sess.Turn(context.Background(), "#stop-refusal")
	fmt.Println("outcome:", res.Outcome, res.Err.Kind, "retryable:", res.Err.Kind.Retryable())
	// Output:
	// session_started: session started
	// notification: this session started with a declared capability gap in: token counts, session continuation
	// notification: hello
	// outcome: turn_completed end_turn
	// session_started: session started
	// notification: Stopping with refusal.
	// turn_failed: agent refused the prompt (stopReason refusal)
	// outcome: turn_failed turn_refused retryable: false
}
