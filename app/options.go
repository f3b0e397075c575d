package app

import (
	"log/slog"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// DefaultDrainBound is how long a session keeps reading the runtime's
// standard output after the runtime process was reaped, before it closes
// the stream itself (a descendant may still hold it open).
const DefaultDrainBound = 5 * time.Second

// DefaultReservedMCPName is the MCP server name an operator's
// configuration may not declare: the orchestrator reserves it for its own
// tools entry (docs/behaviour.md#mcp).
const DefaultReservedMCPName = "sortie-tools"

// Version is acpdrive's version, sent as clientInfo.version.
const Version = "0.1.0"

// Options configures a session start.
type Options struct {
	// Config carries the command, the timeouts and the stop grace. It is
	// checked by domain.Config.Validate, as `acpdrive validate` checks it
	// (an error finding refuses the start);
	// start from domain.DefaultConfig. A non-positive ReadTimeout means
	// the documented 30 s (docs/behaviour.md#configuration).
	Config domain.Config
	// Workspace is the absolute directory the runtime runs in.
	Workspace string
	// Launcher prepares and starts the runtime. Required.
	Launcher ports.Launcher
	// Clock is the wall clock. Required (adapters/sysclock has the real
	// one; tests use a fake).
	Clock ports.Clock
	// Logger defaults to a logger that discards everything.
	Logger *slog.Logger
	// OnEvent receives every normalized event, one at a time, in order.
	// It is called synchronously from the session's reader: a slow
	// callback slows the runtime down (backpressure) and loses nothing.
	// It must not call back into the Session.
	OnEvent func(domain.Event)
	// Observers receive every event after OnEvent, under the same rules.
	Observers []ports.Observer
	// OnAgentText, when set, receives the text of every agent message
	// chunk as it arrives, for interfaces that stream the reply. It is
	// called on the same goroutine and under the same ordering as OnEvent.
	OnAgentText func(messageID, text string)
	// OnReadIdle, when set, is called on the session's reader each time
	// it has handled everything the runtime sent so far and is about to
	// wait for more: the moment an interface that buffers its output
	// writes it out (the CLI does). It must not block or call back into
	// the Session.
	OnReadIdle func()
	// MCPConfigPath is the MCP configuration (the mcpServers object of the
	// common mcp.json format) whose servers session/new and the
	// continuation calls declare. Empty delivers no servers; a remote
	// launch delivers none and does not read it.
	MCPConfigPath string
	// MCPSource reads MCPConfigPath; required when it is set.
	MCPSource ports.MCPSource
	// ReservedMCPName is the server name MCPConfigPath may not declare;
	// "" means DefaultReservedMCPName.
	ReservedMCPName string
	// ToolServerBeacon arms the tool-server confirmation; required when
	// Config.ConfirmToolServers is set (docs/behaviour.md#tool-server-confirmation).
	// adapters/mcpbeacon implements it; its Options.Command re-executes
	// the beacon (the CLI: its own executable and "mcp-beacon").
	ToolServerBeacon ports.ToolServerBeacon
	// MeasurementSources may measure the runtime's token usage; the first
	// that claims a local launch is used (docs/behaviour.md#token-accounting).
	MeasurementSources []ports.MeasurementSource
	// Creations remembers when sessions were created, for the
	// creation-minute hold before a session/load. Share one store between
	// the sessions of a process; nil holds nothing.
	Creations CreationStore
	// ResumeSessionID, when set, names a session saved from an earlier run
	// to continue (session/load or session/resume, whichever the runtime
	// advertises); when the continuation is not confirmed the start falls
	// back to session/new, and Session.ID reports the session actually run.
	ResumeSessionID string
	// VerifyCredential runs a short-lived credential-verification session
	// (one fixed prompt, bounded at 60 s) before the working session.
	VerifyCredential bool
	// DrainBound overrides DefaultDrainBound (tests only need it shorter).
	DrainBound time.Duration
	// ClientName and ClientVersion are sent as clientInfo.
	ClientName, ClientVersion string
}

// withDefaults fills what may be left zero. Durations of Config are not
// touched: Validate judges them, and EffectiveReadTimeout reads them.
func (o *Options) withDefaults() {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.OnEvent == nil {
		o.OnEvent = func(domain.Event) {}
	}
	if o.DrainBound <= 0 {
		o.DrainBound = DefaultDrainBound
	}
	if o.ReservedMCPName == "" {
		o.ReservedMCPName = DefaultReservedMCPName
	}
	if o.ClientName == "" {
		o.ClientName = "acpdrive"
	}
	if o.ClientVersion == "" {
		o.ClientVersion = Version
	}
}
