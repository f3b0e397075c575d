package app_test

import (
	"context"
	"fmt"

	"github.com/acpdrive/acpdrive/adapters/inprocess"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
)

// ExampleStart runs one session of two turns on acpdrive's reference agent,
// served in this process by adapters/inprocess instead of a subprocess, and
// prints the normalized events that carry a message, leaving out the
// chunks a reply streams in. To drive a real
// runtime, name its command in the settings and pass
// localexec.New(localexec.Options{}) as the Launcher.
func ExampleStart() {
	settings := domain.DefaultSessionSettings()
	settings.Command = []string{"acpdrive-agent"} // the in-process launcher runs the reference agent whatever it is named
	sess, err := app.Start(context.Background(), app.Options{
		Settings:  settings,
		Workspace: "/",
		Launcher:  inprocess.New("--scenario", "echo"),
		OnEvent: func(ev domain.Event) {
			if ev.Message != "" && ev.Type != domain.EventMessageChunk {
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
