package wiring_test

import (
	"context"
	"fmt"

	"go.uber.org/fx"

	"github.com/acpdrive/acpdrive/adapters/inprocess"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/wiring"
)

// agentRunner is an orchestrator's component: it holds one session for
// the application's life, started and stopped by fx's lifecycle.
type agentRunner struct{ sess *app.Session }

// newAgentRunner starts a session when the application starts and stops
// it when the application stops, with the dependencies wiring provides.
func newAgentRunner(lc fx.Lifecycle, deps wiring.Deps) *agentRunner {
	r := &agentRunner{}
	lc.Append(fx.Hook{
		OnStart: func(ctx context.Context) error {
			settings := domain.DefaultSessionSettings()
			settings.Command = []string{"acpdrive-agent"}
			opts := app.Options{Settings: settings, Workspace: "/"}
			deps.Apply(&opts) // launcher, clock, logger, sources, observers
			sess, err := app.Start(ctx, opts)
			r.sess = sess
			return err
		},
		OnStop: func(ctx context.Context) error { return r.sess.Stop(ctx) },
	})
	return r
}

// ExampleOptions runs acpdrive's fx module in a real fx.App: wiring.Options
// provides the local transport, the clock, the MCP source, the beacon, the
// creation store and the measurement sources; the application's own
// component starts a session on start and stops it on stop. Here the
// launcher is replaced by the in-process reference agent (fx.Decorate);
// without that line the runtime is a local process.
func ExampleOptions() {
	var runner *agentRunner
	fxApp := fx.New(
		wiring.Options(nil, wiring.LocalSettings{Contain: true},
			fx.Decorate(func(ports.Launcher) ports.Launcher { return inprocess.New() }),
		),
		fx.Provide(newAgentRunner),
		fx.Populate(&runner),
	)
	ctx := context.Background()
	if err := fxApp.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	res := runner.sess.Turn(ctx, "hello")
	fmt.Println(res.Outcome, res.Reply)
	if err := fxApp.Stop(ctx); err != nil {
		fmt.Println(err)
	}
	fmt.Println(runner.sess.Turn(ctx, "again").Err)
	// Output:
	// turn_completed hello
	// agent: turn_cancelled: the session was stopped; a stopped session takes no further turn
}
