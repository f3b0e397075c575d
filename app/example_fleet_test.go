package app_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/acpdrive/acpdrive/adapters/inprocess"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
)

// rateLimitedOnce is a reference-agent script: the first prompt of a
// session is rate limited (HTTP 429, retry after 10 ms), the next ones
// answer with JSON.
const rateLimitedOnce = `{"defaultTurn":"busy","turns":{"ok":{"steps":[{"step":"text","text":"{\"status\":\"done\"}"}]},
 "busy":{"next":"ok","steps":[{"step":"error","error":{"code":429,"message":"slow down","data":{"retryAfterMs":10}}}]}}}`

// exampleScript writes rateLimitedOnce to a file of its own.
func exampleScript() string {
	dir, err := os.MkdirTemp("", "acpdrive-example")
	if err != nil {
		panic(err)
	}
	path := filepath.Join(dir, "agent.json")
	if err := os.WriteFile(path, []byte(rateLimitedOnce), 0o600); err != nil {
		panic(err)
	}
	return path
}

// ExampleFleet places sessions over two hosts, the least-loaded first,
// and counts every turn of every session it placed.
func ExampleFleet() {
	ctx := context.Background()
	one, two := inprocess.New("--scenario", "echo"), inprocess.New("--scenario", "echo")
	fleet, err := app.NewFleet(app.FleetOptions{Hosts: []app.FleetHost{{Name: "one", Launcher: one}, {Name: "two", Launcher: two}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	opts := app.Options{Settings: domain.DefaultSessionSettings(), Workspace: "/"} // the launcher is the host's
	a, err := fleet.Start(ctx, opts)                                               // on "one"
	if err != nil {
		fmt.Println(err)
		return
	}
	b, err := fleet.Start(ctx, opts) // on "two", the least loaded
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(a.Turn(ctx, "hello").Reply, b.Turn(ctx, "world").Reply)
	_ = a.Stop(ctx)
	_ = b.Stop(ctx)
	fmt.Println(fleet.Totals())
	fmt.Println("close:", fleet.Close(ctx))
	// Output:
	// hello world
	// 2 turn(s); tokens: not measured
	// close: <nil>
}

// ExampleFleet_Run runs one task through its prompts on a fleet: the
// rate-limited first turn is retried after the runtime's retry-after,
// the last prompt asks for the structured result.
func ExampleFleet_Run() {
	ctx := context.Background()
	script := exampleScript()
	defer func() { _ = os.RemoveAll(filepath.Dir(script)) }()
	fleet, _ := app.NewFleet(app.FleetOptions{Hosts: []app.FleetHost{{Launcher: inprocess.New("--script", script)}}})
	settings := domain.DefaultSessionSettings()
	settings.OutputSchema = []byte(`{"type":"object","required":["status"]}`)
	res := fleet.Run(ctx, app.Options{Settings: settings, Workspace: "/"}, app.Run{
		Prompts: []string{"first", "second"},
		Retry:   app.RetryPolicy{MaxRetries: 1},
		OnRetry: func(w app.Retry) {
			fmt.Println("retry", w.Attempt, "after", w.Wait, "from the runtime:", w.FromRuntime)
		},
		OnTurn: func(t app.RunTurn) { fmt.Println("turn", t.N, t.Result.Outcome) },
	})
	fmt.Println("completed:", res.Completed, "result:", string(res.Result))
	fmt.Println(res.Totals)
	// Output:
	// retry 1 after 10ms from the runtime: true
	// turn 1 turn_completed
	// turn 2 turn_completed
	// completed: true result: {"status":"done"}
	// 3 turn(s); tokens: not measured
}

// ExampleRun_Drive drives a session started by hand through its prompts,
// within a turn ceiling.
func ExampleRun_Drive() {
	ctx := context.Background()
	sess, err := app.Start(ctx, app.Options{Settings: domain.DefaultSessionSettings(), Workspace: "/", Launcher: inprocess.New("--scenario", "echo")})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = sess.Stop(ctx) }()
	res := app.Run{Prompts: []string{"one", "two", "three"}, Ceilings: app.Ceilings{MaxTurns: 2}}.Drive(ctx, sess)
	for _, t := range res.Turns {
		fmt.Println(t.N, t.Result.Reply)
	}
	fmt.Println(res.Stopped)
	// Output:
	// 1 one
	// 2 two
	// the run reached its turn ceiling; no further prompt was sent
}

// ExampleRetrier retries a rate-limited turn on the same session, after
// the runtime's retry-after; with no Clock it waits on the system clock.
func ExampleRetrier() {
	ctx := context.Background()
	script := exampleScript()
	defer func() { _ = os.RemoveAll(filepath.Dir(script)) }()
	sess, err := app.Start(ctx, app.Options{Settings: domain.DefaultSessionSettings(), Workspace: "/", Launcher: inprocess.New("--script", script)})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = sess.Stop(ctx) }()
	r := app.Retrier{
		Policy: app.RetryPolicy{MaxRetries: 2},
		OnWait: func(w app.Retry) { fmt.Println("waiting", w.Wait, "for", w.Result.Failure.Class) },
	}
	res, same, _ := r.Turn(ctx, sess, "go")
	fmt.Println(res.Outcome, res.Reply, same == sess)
	// Output:
	// waiting 10ms for rate_limited
	// turn_completed {"status":"done"} true
}

// ExampleHost runs two sessions on one shared runtime process; each
// session's Stop ends it alone.
func ExampleHost() {
	ctx := context.Background()
	host, err := app.NewHost(app.Options{Settings: domain.DefaultSessionSettings(), Workspace: "/", Launcher: inprocess.New("--scenario", "multi-session")}, app.HostOptions{SessionsPerProcess: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	a, err := host.Start(ctx, app.Options{Settings: domain.DefaultSessionSettings(), Workspace: "/"})
	if err != nil {
		fmt.Println(err)
		return
	}
	b, err := host.Start(ctx, app.Options{Settings: domain.DefaultSessionSettings(), Workspace: "/"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(a.Turn(ctx, "hello").Reply, b.Turn(ctx, "there").Reply)
	fmt.Println("processes:", len(host.Processes()), "sessions on it:", host.Processes()[0].Sessions)
	_ = a.Stop(ctx)
	fmt.Println(b.Turn(ctx, "still here").Reply)
	fmt.Println("close:", host.Close(ctx))
	// Output:
	// hello there
	// processes: 1 sessions on it: 2
	// still here
	// close: <nil>
}
