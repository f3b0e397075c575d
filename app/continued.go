package app

// msgNoContinuationRoute is Continuation.Reason when the runtime
// advertises no way to continue a session.
const msgNoContinuationRoute = "the runtime advertises neither session/load nor session/resume"

// Continuation is what became of the session Options.ResumeSessionID
// asked to continue (docs/behaviour.md#session-continuation): whether it
// is the session that runs, through which route, and, when it is not, why
// the start fell back to a new session.
type Continuation struct {
	// Requested is the session id the caller asked to continue.
	Requested string `json:"requested"`
	// Continued reports that the requested session is the one running.
	Continued bool `json:"continued"`
	// Route is the continuation method tried ("session/load" or
	// "session/resume"); "" when the runtime advertises none.
	Route string `json:"route,omitempty"`
	// Reason says why the session was not continued: the runtime's error
	// answer, the confirmation that never came, or no route at all; ""
	// when it was continued.
	Reason string `json:"reason,omitempty"`
}

// Continuation reports what became of Options.ResumeSessionID; ok is false
// when no continuation was asked for (or the start has not reached the
// session's resolution).
func (s *Session) Continuation() (c Continuation, ok bool) {
	if s.res.continuation == nil {
		return Continuation{}, false
	}
	return *s.res.continuation, true
}
