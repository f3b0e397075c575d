// Package wiring assembles acpdrive's adapters into the application with
// go.uber.org/fx. It is the only package (besides the CLI's main) that
// imports fx; every constructor it registers also works without fx.
//
// A vendor adds a measurement source by providing it into the value group
// "measurement_sources" (see MeasurementSource); an observer (tracing,
// metrics) goes into the group "observers" (see Observer). Neither needs a
// change to app/.
package wiring

import (
	"log/slog"

	"go.uber.org/fx"

	"github.com/acpdrive/acpdrive/adapters/claude_measure"
	"github.com/acpdrive/acpdrive/adapters/codex_measure"
	"github.com/acpdrive/acpdrive/adapters/copilot_measure"
	"github.com/acpdrive/acpdrive/adapters/gemini_measure"
	"github.com/acpdrive/acpdrive/adapters/localexec"
	"github.com/acpdrive/acpdrive/adapters/mcp"
	"github.com/acpdrive/acpdrive/adapters/mcpbeacon"
	"github.com/acpdrive/acpdrive/adapters/mcpresult"
	"github.com/acpdrive/acpdrive/adapters/qwen_measure"
	"github.com/acpdrive/acpdrive/adapters/sshexec"
	"github.com/acpdrive/acpdrive/adapters/sshexec/native"
	"github.com/acpdrive/acpdrive/adapters/sysclock"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/ports"
)

// Deps is what the application needs from the outside world.
type Deps struct {
	fx.In

	Launcher           ports.Launcher
	Clock              ports.Clock
	Logger             *slog.Logger
	MCPSource          ports.MCPSource
	ToolServerBeacon   ports.ToolServerBeacon
	ResultServer       ports.ResultServer `optional:"true"`
	Creations          app.CreationStore
	MeasurementSources []ports.MeasurementSource `group:"measurement_sources"`
	Observers          []ports.Observer          `group:"observers"`
}

// Apply copies the dependencies into o.
func (d Deps) Apply(o *app.Options) {
	o.Launcher, o.Clock, o.Logger = d.Launcher, d.Clock, d.Logger
	o.MCPSource, o.Creations = d.MCPSource, d.Creations
	o.ToolServerBeacon = d.ToolServerBeacon
	o.ResultServer = d.ResultServer
	o.MeasurementSources = d.MeasurementSources
	o.Observers = d.Observers
}

// LocalSettings configures the local-process transport.
type LocalSettings struct {
	// Contain makes teardown reach descendants that left the runtime's
	// process group (adapters/localexec, Options.Contain).
	Contain bool
	// BeaconCommand re-executes the tool-server beacon
	// (adapters/mcpbeacon, Options.Command): the CLI passes its own
	// executable and "mcp-beacon". Empty: a session that asks for the
	// confirmation fails to start.
	BeaconCommand []string
	// ResultCommand re-executes the result tool's server as a stdio MCP
	// server (adapters/mcpresult, Options.Command): the CLI passes its
	// own executable and "mcp-result". Empty: the result tool is served
	// from this process over HTTP on 127.0.0.1 to a runtime that
	// advertises mcpCapabilities.http, and a result from any other
	// runtime is taken from the reply (docs/behaviour.md#structured-results).
	ResultCommand []string
}

// LocalModule provides the local-process transport, the system clock,
// the MCP source, the tool-server beacon and the process-wide creation
// store. It expects a
// *slog.Logger and LocalSettings to be supplied.
var LocalModule = fx.Module("acpdrive_local",
	fx.Provide(
		NewLocalLauncher,
		NewSystemClock,
		NewMCPSource,
		NewToolServerBeacon,
		NewResultServer,
		NewCreationStore,
	),
)

// MeasurementModule provides the measurement sources acpdrive ships, one
// per runtime it can measure (Gemini CLI, Claude Code through the Claude
// agent ACP adapter, Codex through codex-acp, Qwen Code, Copilot CLI),
// into the
// "measurement_sources" group. A vendor's source joins the same group.
var MeasurementModule = fx.Module("acpdrive_measurement",
	MeasurementSource(func(l *slog.Logger) *gemini_measure.Source {
		return gemini_measure.New(gemini_measure.Options{Logger: l})
	}),
	MeasurementSource(func(l *slog.Logger) *claude_measure.Source {
		return claude_measure.New(claude_measure.Options{Logger: l})
	}),
	MeasurementSource(func(l *slog.Logger) *codex_measure.Source {
		return codex_measure.New(codex_measure.Options{Logger: l})
	}),
	MeasurementSource(func(l *slog.Logger) *qwen_measure.Source {
		return qwen_measure.New(qwen_measure.Options{Logger: l})
	}),
	MeasurementSource(func(l *slog.Logger) *copilot_measure.Source {
		return copilot_measure.New(copilot_measure.Options{Logger: l})
	}),
)

// MeasurementSource annotates a constructor of a ports.MeasurementSource
// so that its result joins the "measurement_sources" value group.
func MeasurementSource(constructor any) fx.Option {
	return fx.Provide(fx.Annotate(constructor, fx.As(new(ports.MeasurementSource)), fx.ResultTags(`group:"measurement_sources"`)))
}

// Observer annotates a constructor of a ports.Observer so that its result
// joins the "observers" value group.
func Observer(constructor any) fx.Option {
	return fx.Provide(fx.Annotate(constructor, fx.As(new(ports.Observer)), fx.ResultTags(`group:"observers"`)))
}

// NewMCPSource builds the MCP configuration reader.
func NewMCPSource(logger *slog.Logger) ports.MCPSource {
	return mcp.New(mcp.Options{Logger: logger})
}

// NewToolServerBeacon builds the tool-server confirmation's beacon.
func NewToolServerBeacon(logger *slog.Logger, s LocalSettings) ports.ToolServerBeacon {
	return mcpbeacon.New(mcpbeacon.Options{Command: s.BeaconCommand, Logger: logger})
}

// NewResultServer builds the result tool's server
// (docs/behaviour.md#structured-results): the stdio server of
// LocalSettings.ResultCommand when it is set (the CLI's), else the server
// a library program needs no binary for, served from its own process
// over HTTP on 127.0.0.1 to a runtime that advertises
// mcpCapabilities.http.
func NewResultServer(logger *slog.Logger, s LocalSettings) ports.ResultServer {
	if len(s.ResultCommand) == 0 {
		return mcpresult.New(mcpresult.Options{HTTP: true, Logger: logger})
	}
	return mcpresult.New(mcpresult.Options{Command: s.ResultCommand, Logger: logger})
}

// NewLocalLauncher builds the local-process launcher.
func NewLocalLauncher(logger *slog.Logger, s LocalSettings) ports.Launcher {
	return localexec.New(localexec.Options{Logger: logger, Contain: s.Contain})
}

// NewSystemClock returns the wall clock.
func NewSystemClock() ports.Clock { return sysclock.Clock{} }

// NewCreationStore returns the process-wide store of session creation
// times.
func NewCreationStore() app.CreationStore { return app.NewMemoryCreations() }

// Options returns the fx options of a local acpdrive application that
// logs to logger (nil discards), plus extra options (sources, observers).
func Options(logger *slog.Logger, s LocalSettings, extra ...fx.Option) fx.Option {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return fx.Options(
		fx.Supply(logger, s),
		LocalModule,
		MeasurementModule,
		fx.Options(extra...),
		fx.NopLogger,
	)
}

// Resolve builds the dependency graph for a local launch and returns it.
func Resolve(logger *slog.Logger, s LocalSettings, extra ...fx.Option) (Deps, error) {
	var d Deps
	a := fx.New(Options(logger, s, extra...), fx.Invoke(func(in Deps) { d = in }))
	if err := a.Err(); err != nil {
		return Deps{}, err
	}
	return d, nil
}

// SSHSettings configures the ssh-binary transport for one host.
type SSHSettings struct {
	// Host is the destination ([user@]host[:port] or a config alias).
	Host string
	// StrictHostKeyChecking is worker.ssh_strict_host_key_checking.
	StrictHostKeyChecking string
	// ConfigFile is worker.ssh_config (ssh -F); "" for the user's own.
	ConfigFile string
	// PassEnv is worker.ssh_pass_env (names only).
	PassEnv []string
	// Native selects the x/crypto/ssh transport instead of the ssh binary.
	Native bool
}

// NewSSHLauncher returns the SSH launcher for one host: the ssh binary
// (adapters/sshexec), or with Native the x/crypto/ssh transport
// (adapters/sshexec/native).
func NewSSHLauncher(logger *slog.Logger, s SSHSettings) ports.Launcher {
	if s.Native {
		return native.New(native.Options{
			Host: s.Host, StrictHostKeyChecking: s.StrictHostKeyChecking,
			ConfigFile: s.ConfigFile, PassEnv: s.PassEnv, Logger: logger,
		})
	}
	return sshexec.New(sshexec.Options{
		Host: s.Host, StrictHostKeyChecking: s.StrictHostKeyChecking,
		ConfigFile: s.ConfigFile, PassEnv: s.PassEnv, Logger: logger,
	})
}

// NewSSHPool returns the launcher for settings written for several SSH
// hosts: an sshexec.Pool over one launcher per host (the ssh binary, or
// with s.Native the x/crypto/ssh transport; s.Host is ignored), handing a
// session the least-loaded host within perHostCap (<= 0: no cap), ties to
// the earlier host. app.Start moves to the next host when one cannot be
// reached (docs/behaviour.md#ssh).
func NewSSHPool(logger *slog.Logger, s SSHSettings, hosts []string, perHostCap int) ports.Launcher {
	hl := make([]sshexec.HostLauncher, 0, len(hosts))
	for _, h := range hosts {
		s.Host = h
		hl = append(hl, sshexec.HostLauncher{Host: h, Launcher: NewSSHLauncher(logger, s)})
	}
	return sshexec.NewPool(hl, perHostCap)
}
