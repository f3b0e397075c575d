package main

import "github.com/acpdrive/acpdrive/app"

// resumeLine is run_result's account of a --resume
// (docs/behaviour.md#session-continuation).
type resumeLine struct {
	// Requested is the session --resume named.
	Requested string `json:"requested"`
	// Continued reports that it was the session run.
	Continued bool `json:"continued"`
	// Route is the continuation method tried ("" when the runtime
	// advertises none).
	Route string `json:"route,omitempty"`
	// Reason says why it was not continued; absent when it was.
	Reason string `json:"reason,omitempty"`
}

// resumeOutcome is what became of --resume ID once the session started,
// as the session reports it; nil when no --resume was given.
func resumeOutcome(sess *app.Session) *resumeLine {
	c, ok := sess.Continuation()
	if !ok {
		return nil
	}
	r := resumeLine(c)
	if !r.Continued && r.Reason == "" {
		r.Reason = r.Route + " was not confirmed"
	}
	return &r
}

// text is the line a person reads when the run did not continue.
func (r *resumeLine) text(newID string) string {
	return "did not continue session " + r.Requested + ": " + r.Reason + "; started a new session " + newID + " instead"
}
