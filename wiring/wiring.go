// Package wiring assembles acpdrive's adapters into the application with
// go.uber.org/fx. It is the only package (besides the CLI's main) that
// imports fx; every constructor it registers also works without fx.
package wiring

import (
	"io"
	"log/slog"

	"go.uber.org/fx"

	"github.com/acpdrive/acpdrive/adapters/localexec"
	"github.com/acpdrive/acpdrive/adapters/mcp"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/ports"
)

// Deps is what the application needs from the outside world.
type Deps struct {
	fx.In

	Launcher    ports.Launcher
	Clock       ports.Clock
	Logger      *slog.Logger
	MCPRenderer ports.MCPRenderer
}

// LocalModule provides the local-process transport and the system clock.
// It expects a *slog.Logger to be supplied.
var LocalModule = fx.Module("acpdrive_local",
	fx.Provide(
		NewLocalLauncher,
		NewSystemClock,
		NewMCPRenderer,
	),
)

// NewMCPRenderer builds the MCP configuration renderer.
func NewMCPRenderer(logger *slog.Logger) ports.MCPRenderer {
	return mcp.New(mcp.Options{Logger: logger})
}

// NewLocalLauncher builds the local-process launcher.
func NewLocalLauncher(logger *slog.Logger) ports.Launcher {
	return localexec.New(localexec.Options{Logger: logger})
}

// NewSystemClock returns the wall clock.
func NewSystemClock() ports.Clock { return app.SystemClock{} }

// Options returns the fx options of a local acpdrive application that
// logs to logger (nil discards).
func Options(logger *slog.Logger) fx.Option {
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return fx.Options(
		fx.Supply(logger),
		LocalModule,
		fx.NopLogger,
	)
}

// Resolve builds the dependency graph for a local launch and returns it.
func Resolve(logger *slog.Logger) (Deps, error) {
	var d Deps
	a := fx.New(Options(logger), fx.Populate(&d.Launcher, &d.Clock, &d.Logger, &d.MCPRenderer))
	if err := a.Err(); err != nil {
		return Deps{}, err
	}
	return d, nil
}
