package app_test

import (
	"context"
	"fmt"

	"github.com/acpdrive/acpdrive/adapters/inprocess"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
)

// ExampleOpenSessionStore lists the sessions a runtime keeps, without
// creating one, and forks a new session from one of them. The reference
// agent here advertises list, delete and fork (the scenario
// advertise-all); it keeps no sessions of earlier runs, so its list is
// empty.
func ExampleOpenSessionStore() {
	settings := domain.DefaultSessionSettings()
	settings.Command = []string{"acpdrive-agent"}
	opts := app.Options{Settings: settings, Workspace: "/", Launcher: inprocess.New("--scenario", "advertise-all")}
	store, err := app.OpenSessionStore(context.Background(), opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	sessions, err := store.List(context.Background(), "/")
	fmt.Println("listed:", len(sessions), err)
	fmt.Println("deleted:", store.Delete(context.Background(), "saved-1"))
	_ = store.Stop(context.Background())

	opts.ForkSessionID = "saved-2"
	sess, err := app.Start(context.Background(), opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = sess.Stop(context.Background()) }()
	fmt.Println("route:", sess.Route(), "forked from:", sess.ForkedFrom(), "new id:", sess.ID())
	// Output:
	// listed: 0 <nil>
	// deleted: <nil>
	// route: session/fork forked from: saved-2 new id: fork-1
}

// ExampleSession_Children follows a subagent as a child session: the
// child's events carry its id and its parent's.
func ExampleSession_Children() {
	settings := domain.DefaultSessionSettings()
	settings.Command = []string{"acpdrive-agent"}
	settings.Subagents = true
	sess, err := app.Start(context.Background(), app.Options{
		Settings: settings, Workspace: "/", Launcher: inprocess.New(),
		OnEvent: func(ev domain.Event) {
			if ev.ParentSessionID != "" && ev.Type != domain.EventMessageChunk {
				fmt.Printf("%s of %s: %s: %s\n", ev.SessionID, ev.ParentSessionID, ev.Type, ev.Message)
			}
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = sess.Stop(context.Background()) }()
	res := sess.Turn(context.Background(), "#subagent")
	fmt.Println("outcome:", res.Outcome, "reply:", sess.LastMessage().Text)
	for _, c := range sess.Children() {
		fmt.Println("child:", c.ID, c.State, c.StopReason)
	}
	// Output:
	// child-1 of ref-1: child_started: Explore the repository
	// child-1 of ref-1: notification: The child looked around.
	// child-1 of ref-1: tool_result: ls
	// child-1 of ref-1: context_usage: 1200 of 200000 context tokens (0.6%)
	// child-1 of ref-1: child_state: idle (end_turn)
	// outcome: turn_completed reply: The parent is done.
	// child: child-1 idle end_turn
}
