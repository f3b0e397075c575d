package ports

import (
	"context"

	"github.com/acpdrive/acpdrive/domain"
)

// MeasurementSource reads one runtime's token usage from outside the ACP
// wire, which carries no spend counter (docs/behaviour.md#token-accounting).
// A vendor adds one by implementing this interface and providing it to the
// application (app.Options.MeasurementSources, or the fx value group
// "measurement_sources" in wiring); app owns the rest of the contract:
// when to claim, arm, check, wait, drop and release.
type MeasurementSource interface {
	// Name identifies the source in logs and events ("gemini_telemetry").
	Name() string
	// RuntimeName is the agentInfo.name of the runtime the source reads;
	// the handshake must report it for the source to be kept.
	RuntimeName() string
	// Claims reports whether a local launch of command (program and
	// arguments, as split) runs the source's runtime.
	Claims(command []string) bool
	// Arm prepares one start of a claimed launch: it creates a private
	// temporary directory and says which environment the runtime needs.
	Arm(ctx context.Context) (Measurement, error)
}

// Measurement is one armed start of a MeasurementSource.
type Measurement interface {
	// Env is appended to the runtime's environment (overriding inherited
	// values), e.g. to point its telemetry into the temporary directory.
	Env() []string
	// SessionOpened tells the source which session the runtime runs, once
	// it is created or continued, so it can start reading from there (a
	// continued session's earlier turns are not counted again).
	SessionOpened(sessionID string, continued bool)
	// TurnUsage waits, bounded by ctx (the turn's own read budget), for
	// the figures of the turn that just ended on sessionID: that turn's
	// own figures, never a running total. ok is false when no complete
	// record (one carrying every counter the source maps) arrived in time.
	// model is the model the figures are attributed to.
	TurnUsage(ctx context.Context, sessionID string) (usage domain.Usage, model string, ok bool, err error)
	// Release removes what Arm created. It is called once, at session
	// end or before a restart that no longer uses the source.
	Release() error
}

// RuntimeRecognizer is an optional interface of a MeasurementSource whose
// runtime answers the handshake under more than one name (a package that
// was renamed, a name carrying its version). Recognizes reports whether
// agentName, the handshake's agentInfo.name, is the source's runtime. A
// source without it is recognized by RuntimeName alone.
type RuntimeRecognizer interface {
	Recognizes(agentName string) bool
}
