package app

import (
	"strings"

	"github.com/acpdrive/acpdrive/domain"
)

// RuntimeExit reports how the runtime's process ended and the cleaned tail
// of its standard error, as the early exit report quotes them ("exit
// status 3: fatal: …"; docs/behaviour.md#start-up-errors), for an ending
// the runtime's exit caused (a turn that failed with port_exit). It waits
// at most a second for a process whose connection already ended; ok is
// false when no process ran or it has not ended.
func (s *Session) RuntimeExit() (text string, ok bool) {
	proc := s.conn.rt.proc
	if proc == nil {
		return "", false
	}
	select {
	case <-proc.Exited():
	case <-s.clock.After(exitSettle):
		return "", false
	}
	exit := proc.Exit()
	tail, truncated := proc.StderrTail()
	return strings.TrimPrefix(domain.EarlyExitReport(exit.String(), tail, truncated), domain.MsgEarlyExitPrefix), true
}
