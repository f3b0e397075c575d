package app

import (
	"errors"
	"log/slog"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// DefaultDrainBound is how long a session keeps reading the runtime's
// standard output after the runtime process was reaped, before it closes
// the stream itself (a descendant may still hold it open).
const DefaultDrainBound = 5 * time.Second

// Version is acpdrive's version, sent as clientInfo.version.
const Version = "0.1.0"

// Options configures a session start: the settings of the session, and the
// ports it runs over. Only Launcher is required; everything else has a
// default or is optional.
type Options struct {
	// Settings is what the session uses: command, bounds, stop grace,
	// tool-server confirmation, MCP servers, the reserved MCP name and the
	// hosts the settings were written for. Start from
	// domain.DefaultSessionSettings, or convert a WORKFLOW.md with
	// domain.Config.SessionSettings (package config loads one). Settings
	// that name SSH hosts refuse a Launcher that runs the runtime on this
	// machine.
	Settings domain.SessionSettings
	// Workspace is the absolute directory the runtime runs in.
	Workspace string
	// ServerWorkspace sends, in place of Workspace, the workspace the
	// runtime announces in its initialize answer (qwen serve's
	// agentCapabilities._meta.qwen.workspaceCwd), for a runtime at a URL
	// whose workspace is the server's; Workspace is sent when none (or no
	// absolute path) is announced (docs/behaviour.md#network).
	ServerWorkspace bool
	// Launcher prepares and starts the runtime: adapters/localexec for a
	// local process, adapters/sshexec (its Pool over several hosts) or
	// adapters/sshexec/native for SSH, adapters/inprocess for a runtime
	// served inside this process. Required.
	Launcher ports.Launcher
	// Clock is the wall clock; nil means the system clock (tests pass a
	// fake one).
	Clock ports.Clock
	// Logger defaults to a logger that discards everything.
	Logger *slog.Logger
	// OnEvent receives every normalized event, one at a time, in order.
	// On a session of its own it is called synchronously from the
	// session's reader: a slow callback slows the runtime down
	// (backpressure) and loses nothing. On a Host's shared process it is
	// called on a goroutine of the session's own, so that it stalls no
	// other session, within HostOptions.EventBacklog
	// (docs/behaviour.md#runtime-host); a turn returns once its events
	// were delivered. It must not call back into the Session.
	OnEvent func(domain.Event)
	// Observers receive every event after OnEvent, under the same rules.
	Observers []ports.Observer
	// OnAgentText, when set, receives the text of every agent message
	// chunk as it arrives, for interfaces that stream the reply. It is
	// called on the same goroutine and under the same ordering as OnEvent.
	OnAgentText func(messageID, text string)
	// OnToolStart, when set, is told of each tool call of the session's
	// own when it is first announced: its id, normalized kind and title
	// (cut to domain.MessageCap), for interfaces that show a running tool;
	// its end is the tool_result event. It is called on the same
	// goroutine and under the same ordering as OnEvent.
	OnToolStart func(id string, kind domain.ToolKind, title string)
	// OnReadIdle, when set, is called on the session's reader each time
	// it has handled everything the runtime sent so far and is about to
	// wait for more: the moment an interface that buffers its output
	// writes it out (the CLI does). It must not block or call back into
	// the Session.
	OnReadIdle func()
	// MCPSource reads Settings.MCPConfigPath; required when it is set
	// (adapters/mcp).
	MCPSource ports.MCPSource
	// ToolServerBeacon arms the tool-server confirmation; required when
	// Settings.ConfirmToolServers is set
	// (docs/behaviour.md#tool-server-confirmation). adapters/mcpbeacon
	// implements it; its Options.Command re-executes the beacon (the CLI:
	// its own executable and "mcp-beacon").
	ToolServerBeacon ports.ToolServerBeacon
	// ResultServer serves the result tool to a local launch when
	// Settings.OutputSchema is set (docs/behaviour.md#structured-results);
	// nil: the result is taken from the reply alone. adapters/mcpresult
	// implements it: mcpresult.New(mcpresult.Options{HTTP: true}) serves
	// it from this process over HTTP on 127.0.0.1 to a runtime that
	// advertises mcpCapabilities.http, with no binary to re-execute (the
	// default of wiring.NewResultServer); with Options.Command it is a
	// re-executed stdio server (the CLI re-executes itself as
	// "mcp-result").
	ResultServer ports.ResultServer
	// MeasurementSources may measure the runtime's token usage; the first
	// that claims a local launch is used (docs/behaviour.md#token-accounting).
	MeasurementSources []ports.MeasurementSource
	// Creations remembers when sessions were created, for the
	// creation-minute hold before a session/load. nil means a store of
	// this start's own; share one (NewMemoryCreations) between the
	// sessions of a process so that the hold spans them.
	Creations CreationStore
	// ResumeSessionID, when set, names a session saved from an earlier run
	// to continue (session/load or session/resume, whichever the runtime
	// advertises); when the continuation is not confirmed the start falls
	// back to session/new, and Session.ID reports the session actually run.
	ResumeSessionID string
	// ForkSessionID, when set, names a session whose history the new
	// session starts from, through session/fork
	// (docs/behaviour.md#sessions-as-resources-and-child-sessions): the
	// start fails when the runtime does not advertise fork or refuses it.
	// It excludes ResumeSessionID.
	ForkSessionID string
	// PermissionPolicy decides the runtime's permission requests
	// (docs/behaviour.md#permission-posture); nil means
	// Settings.Permissions, whose zero value refuses every request.
	PermissionPolicy ports.PermissionPolicy
	// Answers answers the runtime's questions (elicitation/create), the
	// parent session's and its children's; set, it makes acpdrive offer
	// elicitation's form mode at initialize. nil offers none, and a
	// question ends the turn turn_input_required
	// (docs/behaviour.md#elicitation). On a Host it is offered when the
	// host's options set it.
	Answers ports.AnswerPolicy
	// VerifyCredential runs VerifyCredential before the working session.
	VerifyCredential bool
	// ClientName and ClientVersion are sent as clientInfo; they default to
	// "acpdrive" and Version.
	ClientName, ClientVersion string

	// drainBound overrides DefaultDrainBound; only this package's tests
	// set it (export_test.go).
	drainBound time.Duration
	// output is Settings.OutputSchema compiled by resolved; nil when none
	// is set (docs/behaviour.md#structured-results).
	output *outputSchema
}

// ProbeOptions asks Probe for more than the handshake
// (docs/behaviour.md#probe).
type ProbeOptions struct {
	// Session makes Probe create a throwaway session, report its modes,
	// configuration options, models and commands, and delete (or close)
	// it.
	Session bool
}

// probeOptions is the one ProbeOptions of a Probe call, or none.
func probeOptions(po []ProbeOptions) ProbeOptions {
	if len(po) == 0 {
		return ProbeOptions{}
	}
	return po[0]
}

// OptionsError is a programmer's mistake in Options: a required port
// missing, or settings that contradict the ports (docs/behaviour.md#library).
// It is never a runtime failure: nothing was started, no startup_failed
// event is sent, and retrying cannot help. Test for it with errors.As.
type OptionsError struct {
	// Field names the option at fault ("Launcher", "Settings.Hosts", …).
	Field string
	// Reason says what is wrong with it.
	Reason string
}

// Error implements error.
func (e *OptionsError) Error() string { return "app: Options." + e.Field + " " + e.Reason }

// resolved fills what may be left zero and refuses what cannot start at
// all (docs/behaviour.md#validation): a programmer's mistake is an
// *OptionsError; settings with an error finding of
// domain.SessionSettings.Validate are agent_not_found with the findings'
// text. Durations are not touched: Validate judges them, and the Effective
// methods read them.
func (o Options) resolved() (Options, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.OnEvent == nil {
		o.OnEvent = func(domain.Event) {}
	}
	if o.Clock == nil {
		o.Clock = systemClock{}
	}
	if o.Creations == nil {
		o.Creations = NewMemoryCreations()
	}
	if o.drainBound <= 0 {
		o.drainBound = DefaultDrainBound
	}
	if o.ClientName == "" {
		o.ClientName = "acpdrive"
	}
	if o.ClientVersion == "" {
		o.ClientVersion = Version
	}
	switch {
	case o.Launcher == nil:
		return o, &OptionsError{Field: "Launcher", Reason: "is required"}
	case o.Settings.ConfirmToolServers && o.ToolServerBeacon == nil:
		return o, &OptionsError{Field: "ToolServerBeacon", Reason: "is required when Settings.ConfirmToolServers is set"}
	case o.ForkSessionID != "" && o.ResumeSessionID != "":
		return o, &OptionsError{Field: "ForkSessionID", Reason: "excludes ResumeSessionID"}
	case o.Settings.MCPConfigPath != "" && o.MCPSource == nil:
		return o, &OptionsError{Field: "MCPSource", Reason: "is required when Settings.MCPConfigPath is set"}
	}
	if err := domain.FindingsError(o.Settings.Validate()); err != nil {
		return o, domain.WrapError(domain.KindAgentNotFound, err.Error(), err).WithReason(domain.ReasonConfigurationInvalid)
	}
	out, err := compiledOutput(o.Settings)
	if err != nil {
		return o, err
	}
	o.output = out
	return o, nil
}

// refused reports options that cannot start: settings refused at start
// are a startup_failed event, for OnEvent and every observer's Observe
// (no session is observed); a programmer's mistake is not an event.
func refused(opts Options, err error) error {
	var oe *OptionsError
	if !errors.As(err, &oe) {
		ev := domain.Event{Type: domain.EventStartupFailed, Message: failureMessage(err), Time: opts.Clock.Now().UTC()}
		opts.OnEvent(ev)
		(&observation{plain: opts.Observers}).event(ev)
	}
	return err
}

// remoteMismatch refuses a plan that runs the runtime on this machine for
// settings written for SSH hosts: the configuration would otherwise run
// locally without a word.
func remoteMismatch(s domain.SessionSettings, target ports.Target) error {
	if s.Remote() && !target.Remote() {
		return &OptionsError{Field: "Launcher",
			Reason: "starts the runtime on this machine, but Settings.Hosts names SSH hosts; pass an SSH launcher (adapters/sshexec) or clear Settings.Hosts"}
	}
	return nil
}

// systemClock is the wall clock of this machine, the default Clock.
type systemClock struct{}

func (systemClock) Now() time.Time                         { return time.Now() }
func (systemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
