package app

import (
	"io"
	"log/slog"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// DefaultDrainBound is how long a session keeps reading the runtime's
// standard output after the runtime process was reaped, before it closes
// the stream itself (a descendant may still hold it open).
const DefaultDrainBound = 5 * time.Second

// Options configures a session start.
type Options struct {
	// Config carries the command, the timeouts and the stop grace. Only the
	// agent fields are read here; zero durations take the defaults of
	// domain.DefaultConfig.
	Config domain.Config
	// Workspace is the absolute directory the runtime runs in.
	Workspace string
	// Launcher starts the runtime process. Required.
	Launcher ports.Launcher
	// Clock defaults to the system clock.
	Clock ports.Clock
	// Logger defaults to a logger that discards everything.
	Logger *slog.Logger
	// OnEvent receives every normalized event, one at a time, in order.
	// It is called synchronously from the session's reader: a slow
	// callback slows the runtime down (backpressure) and loses nothing.
	// It must not call back into the Session.
	OnEvent func(domain.Event)
	// OnAgentText, when set, receives the text of every agent message
	// chunk as it arrives, for interfaces that stream the reply. It is
	// called on the same goroutine and under the same ordering as OnEvent.
	OnAgentText func(messageID, text string)
	// MCPConfigPath is the generated MCP configuration (the mcpServers
	// object of the common mcp.json format) whose servers session/new and
	// the continuation calls declare. Empty delivers no servers.
	MCPConfigPath string
	// MCPRenderer parses and renders MCPConfigPath; required when it is set.
	MCPRenderer ports.MCPRenderer
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

func (o *Options) withDefaults() {
	def := domain.DefaultConfig()
	if o.Config.StopGrace <= 0 {
		o.Config.StopGrace = def.StopGrace
	}
	if o.Config.ReadTimeout == 0 {
		o.Config.ReadTimeout = def.ReadTimeout
	}
	if o.Clock == nil {
		o.Clock = SystemClock{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if o.OnEvent == nil {
		o.OnEvent = func(domain.Event) {}
	}
	if o.DrainBound <= 0 {
		o.DrainBound = DefaultDrainBound
	}
	if o.ClientName == "" {
		o.ClientName = "acpdrive"
	}
	if o.ClientVersion == "" {
		o.ClientVersion = Version
	}
}

// Version is acpdrive's version, sent as clientInfo.version.
const Version = "0.1.0"

// SystemClock is the ports.Clock of the real wall clock.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// After returns time.After(d).
func (SystemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
