package main

import (
	"fmt"

	"github.com/acpdrive/acpdrive/app"
)

// heldRunResult is attach's closing line: the run_result of the held run
// it completed, in run's shape, with what an attach knows of the session
// (its id, the run's turns, the permission decisions it printed;
// docs/behaviour.md#held-sessions).
func (p *printer) heldRunResult(run app.HeldRun) {
	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.buf.flush() // a result is a boundary the reader waits for
	if p.json {
		_ = p.enc.Encode(runResultLine{Type: "run_result", SessionID: run.SessionID, CapabilityGaps: []string{},
			Turns: len(run.Turns), Permissions: p.permissions, Result: p.result})
		return
	}
	p.clearStatus()
	if p.quiet {
		return
	}
	fmt.Fprintf(p.out, "session %s (held): %d turn(s)", run.SessionID, len(run.Turns))
	if text := permissionCounts(p.permissions); text != "" {
		fmt.Fprintf(p.out, "; permissions: %s", text)
	}
	fmt.Fprintln(p.out)
}
