package app_test

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/acpdrive/acpdrive/adapters/inprocess"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// referenceSettings are the settings of the examples' sessions: the
// in-process launcher serves acpdrive's reference agent whatever the
// command names.
func referenceSettings() domain.SessionSettings {
	settings := domain.DefaultSessionSettings()
	settings.Command = []string{"acpdrive-agent"}
	return settings
}

// ExampleSession_Turn runs a turn and reads its reply: the agent's last
// message of the turn, whole (TurnResult.Reply), however many messages and
// chunks the turn streamed.
func ExampleSession_Turn() {
	ctx := context.Background()
	sess, err := app.Start(ctx, app.Options{Settings: referenceSettings(), Workspace: "/", Launcher: inprocess.New()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = sess.Stop(context.WithoutCancel(ctx)) }()

	res := sess.Turn(ctx, "#two-messages") // the reference agent's turn of two messages
	fmt.Println(res.Outcome, res.StopReason)
	fmt.Printf("reply: %q (cut: %t)\n", res.Reply, res.ReplyCut)
	// Output:
	// turn_completed end_turn
	// reply: "The second message, in two chunks." (cut: false)
}

// ExampleSession_Turn_cancel cancels a running turn through its context:
// session/cancel is sent once, the runtime's answer is awaited (bounded by
// the read timeout), and the turn ends turn_cancelled, which a retry loop
// does not retry. The session goes on.
func ExampleSession_Turn_cancel() {
	ctx := context.Background()
	turnCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	sess, err := app.Start(ctx, app.Options{
		Settings: referenceSettings(), Workspace: "/", Launcher: inprocess.New(),
		OnEvent: func(ev domain.Event) {
			if ev.Type == domain.EventMessageChunk {
				cancel() // once the agent is at work; a context's cancel is no call into the Session
			}
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = sess.Stop(context.WithoutCancel(ctx)) }()

	res := sess.Turn(turnCtx, "#wait-cancel") // the reference agent's turn that waits to be cancelled
	fmt.Println(res.Outcome, res.Err.Kind, "retryable:", res.Err.Kind.Retryable())
	fmt.Printf("reply so far: %q\n", res.Reply)
	fmt.Println(sess.Turn(ctx, "still here").Reply)
	// Output:
	// turn_cancelled turn_cancelled retryable: false
	// reply so far: "Waiting for a cancel."
	// still here
}

// toolCounter is an Observer of one's own: it counts the tool calls that
// ended, by kind, and keeps acpdrive's own notices apart from the agent's
// messages by the notification's Origin.
type toolCounter struct {
	tools   map[string]int
	notices []string
}

// Observe implements ports.Observer. It runs on the session's reader,
// one event at a time, and must not call back into the session.
func (c *toolCounter) Observe(ev domain.Event) {
	switch {
	case ev.Type == domain.EventToolResult:
		c.tools[ev.ToolName]++
	case ev.Type == domain.EventNotification && ev.Origin == domain.OriginAcpdrive:
		c.notices = append(c.notices, ev.Message)
	}
}

var _ ports.Observer = (*toolCounter)(nil)

// ExampleOptions_observers adds an Observer of one's own: it receives
// every event after OnEvent, under the same rules. An observer that
// follows sessions one by one (a tracer) also implements
// ports.SessionObserver.
func ExampleOptions_observers() {
	ctx := context.Background()
	counter := &toolCounter{tools: map[string]int{}}
	sess, err := app.Start(ctx, app.Options{
		Settings: referenceSettings(), Workspace: "/", Launcher: inprocess.New(),
		Observers: []ports.Observer{counter},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	res := sess.Turn(ctx, "#tools") // the reference agent's turn of tool calls
	_ = sess.Stop(ctx)              // after Stop, the observer has seen everything

	fmt.Println(res.Outcome)
	for _, kind := range slices.Sorted(maps.Keys(counter.tools)) {
		fmt.Println(kind, counter.tools[kind])
	}
	fmt.Println(counter.notices)
	// Output:
	// turn_completed
	// delete 1
	// edit 1
	// execute 1
	// fetch 1
	// move 1
	// other 2
	// read 1
	// search 1
	// switch_mode 1
	// think 1
	// [this session started with a declared capability gap in: token counts, session continuation]
}

// envLauncher is a Launcher of one's own: it decorates another launcher
// (here the in-process reference agent; in production localexec or
// sshexec) and adds environment variables to every runtime it starts.
type envLauncher struct {
	next ports.Launcher
	env  []string
}

// Prepare implements ports.Launcher: validate and resolve, start nothing.
func (l envLauncher) Prepare(req ports.LaunchRequest) (ports.Plan, error) {
	plan, err := l.next.Prepare(req)
	if err != nil {
		return nil, err // a *domain.AgentError: invalid_workspace_cwd, agent_not_found
	}
	return envPlan{Plan: plan, env: l.env}, nil
}

// envPlan adds its variables when the plan starts.
type envPlan struct {
	ports.Plan
	env []string
}

// Start implements ports.Plan.
func (p envPlan) Start(ctx context.Context, env []string) (ports.Process, error) {
	return p.Plan.Start(ctx, append(append([]string(nil), env...), p.env...))
}

// A plan that holds something until it starts (a pool's host slot) also
// implements ports.Discarder; app.Start discards a plan it will not start.
// envPlan hands Discard on when the plan it wraps has one.
func (p envPlan) Discard() {
	if d, ok := p.Plan.(ports.Discarder); ok {
		d.Discard()
	}
}

var (
	_ ports.Launcher  = envLauncher{}
	_ ports.Discarder = envPlan{}
)

// ExampleOptions_launcher starts a session through a Launcher of one's
// own.
func ExampleOptions_launcher() {
	ctx := context.Background()
	sess, err := app.Start(ctx, app.Options{
		Settings: referenceSettings(), Workspace: "/",
		Launcher: envLauncher{next: inprocess.New(), env: []string{"ACME_TOKEN=example"}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = sess.Stop(context.WithoutCancel(ctx)) }()
	fmt.Println(sess.Route(), sess.Remote())
	fmt.Println(sess.Turn(ctx, "hello").Reply)
	// Output:
	// session/new false
	// hello
}

// ExampleProbe starts a runtime, reads what it advertises and stops it;
// ProbeOptions.Session also opens (and deletes) a throwaway session to
// show its modes, options, models and commands.
func ExampleProbe() {
	report, err := app.Probe(context.Background(),
		app.Options{Settings: referenceSettings(), Workspace: "/", Launcher: inprocess.New("--scenario", "advertise-all")},
		app.ProbeOptions{Session: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("protocol version:", report.ProtocolVersion)
	fmt.Println("agent:", report.AgentInfo.Name)
	fmt.Println("continuation:", report.ContinuationRoute)
	fmt.Println("session modes:", len(report.Session.Modes))
	fmt.Println(report.Capabilities)
	// Output:
	// protocol version: 1
	// agent: acpdrive-reference-agent
	// continuation: session/load
	// session modes: 2
	// tool servers: protocol
	// token counts: gap
	// session continuation: protocol
	// agent version: protocol
}
