package ports

import (
	"context"
	"time"

	"github.com/acpdrive/acpdrive/domain"
)

// Observer receives every normalized event of a session, in order, on the
// session's reader goroutine: a slow observer slows the runtime down
// (backpressure) and loses nothing. It must not call back into the
// session. Tracing and metrics adapters implement it.
type Observer interface {
	Observe(ev domain.Event)
}

// SessionObserver is an optional interface of an Observer that follows
// sessions one by one, such as a tracer (docs/behaviour.md#observability).
// For every session start, app calls ObserveSession once before anything
// is launched (a restart to settle stays in the same observation) and
// then hands that session's events to the returned SessionObservation
// instead of to Observe. A start refused before launch (an invalid
// configuration) is not observed, and neither is a probe (app.Probe),
// whose events reach Observe.
//
// ctx is the context the start was given: an observer may read its values
// (a tracer its parent span), never its deadline or cancellation, since the
// observation outlives the start.
type SessionObserver interface {
	Observer
	ObserveSession(ctx context.Context, at time.Time) SessionObservation
}

// SessionObservation follows one session from its start to the end of its
// teardown. Observe receives the session's events under the rules of
// Observer; the other methods are called from the goroutines of Start,
// Turn and Stop and from the teardown goroutine, so an implementation must
// be safe for concurrent use. None may call back into the session, and
// none may block for long: they run on the session's own paths.
type SessionObservation interface {
	Observer
	// Step reports a start-up or teardown step once it ended.
	Step(step Step)
	// Notice reports a notice acpdrive itself sent as a notification
	// event (docs/behaviour.md#capabilities, #permission-posture), as
	// opposed to the agent's own text; the event also reaches Observe.
	Notice(at time.Time, message string)
	// Started reports that the start succeeded and the session is kept.
	Started(info SessionInfo)
	// TurnStarted reports that a turn began at at, before its
	// session_started event. It returns the string pairs to add to the
	// `_meta` object of the turn's session/prompt, such as the W3C
	// "traceparent" and "tracestate" of the turn's span; nil adds nothing.
	// Keys acpdrive does not allow there are dropped.
	TurnStarted(at time.Time) map[string]string
	// TurnEnded reports the turn's result, after its outcome event.
	TurnEnded(at time.Time, res domain.TurnResult)
	// Ended reports the end of the observation: after the teardown of a
	// kept session, or after a failed start (end.Err is set).
	Ended(end SessionEnd)
}

// Step is one start-up or teardown step with its real start and end.
type Step struct {
	// Name is one of the Step… names.
	Name string
	// Within names the step this one is part of, "" for the session
	// itself. A step is reported before the step it is within.
	Within string
	// Start and End bound the step on the session's clock.
	Start, End time.Time
	// Err is the step's failure, nil when it succeeded.
	Err error
}

// Step names (docs/behaviour.md#observability). The start-up steps are
// StepVerify (only with credential verification), StepLaunch,
// StepInitialize, StepRestart (a restart to settle the measurement source,
// holding the first start's teardown), StepFailover (a start on another
// host after one that could not be reached, holding its teardown) and the
// resolution, named by its
// route: StepSessionNew, StepSessionLoad or StepSessionResume (a
// continuation that fell back is reported, then session/new). StepTeardown
// holds the teardown steps.
const (
	StepVerify        = "credential_verification"
	StepLaunch        = "launch"
	StepInitialize    = "initialize"
	StepRestart       = "restart"
	StepFailover      = "failover"
	StepSessionNew    = "session/new"
	StepSessionLoad   = "session/load"
	StepSessionResume = "session/resume"

	StepTeardown     = "teardown"
	StepCloseSession = "close_session"
	StepCloseStdin   = "close_stdin"
	StepExitWindow   = "exit_window"
	StepTerminate    = "terminate"
	StepKill         = "kill"
	StepDrain        = "drain"
	StepReap         = "reap"
	StepRelease      = "release"
)

// SessionInfo is what a started session is known by.
type SessionInfo struct {
	// At is when the start ended.
	At time.Time
	// SessionID is the session the runtime runs.
	SessionID string
	// Agent is what the handshake reported.
	Agent domain.AgentInfo
	// Route is "session/new", "session/load" or "session/resume".
	Route string
	// Capabilities is the capability record when the start ended.
	Capabilities domain.Capabilities
	// Remote reports a runtime on another host.
	Remote bool
}

// SessionEnd closes an observation.
type SessionEnd struct {
	// At is when the teardown ended (or the failed start was reported).
	At time.Time
	// Err is the start's failure, or what the teardown reported.
	Err error
	// Started reports a session that started (Started was called).
	Started bool
	// Capabilities is the capability record at the end.
	Capabilities domain.Capabilities
}
