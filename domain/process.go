package domain

import (
	"strconv"
	"strings"
)

// ExitStatus is how a runtime's watched process ended, as a value a local
// process and a remote session report alike.
type ExitStatus struct {
	// Exited reports that the process has ended and the rest is valid.
	Exited bool `json:"exited"`
	// Code is the exit code, or -1 when the process was ended by a signal
	// or the code is unknown.
	Code int `json:"code"`
	// Signal names the signal that ended the process ("killed",
	// "terminated", or a remote side's "TERM"), "" when it exited.
	Signal string `json:"signal,omitempty"`
	// Message is what the transport itself said about the end (a remote
	// shell's or an SSH server's own words), "" when it said nothing.
	Message string `json:"message,omitempty"`
	// Unreachable reports that the transport could not connect to its
	// host, so the runtime never ran (the ssh binary's exit status 255
	// before anything was read; docs/behaviour.md#ssh).
	Unreachable bool `json:"unreachable,omitempty"`
}

// String renders the status the way the early exit report quotes it:
// "exit status N", "signal: NAME", with the transport's message appended
// after a colon, or "" when the process has not ended.
func (s ExitStatus) String() string {
	if !s.Exited {
		return ""
	}
	var b strings.Builder
	switch {
	case s.Signal != "":
		b.WriteString("signal: ")
		b.WriteString(s.Signal)
	case s.Code >= 0:
		b.WriteString("exit status ")
		b.WriteString(strconv.Itoa(s.Code))
	default:
		b.WriteString(unknownExitStatus)
	}
	if s.Message != "" {
		b.WriteString(": ")
		b.WriteString(s.Message)
	}
	return b.String()
}

// Survivor is one process of a runtime's tree that outlived teardown.
type Survivor struct {
	// PID is its process ID on Host.
	PID int `json:"pid"`
	// Host is "" for this machine, else the remote host it runs on.
	Host string `json:"host,omitempty"`
	// Name is its command name, when it could be read.
	Name string `json:"name,omitempty"`
}

// SurvivorsError reports the processes of a runtime's tree that were
// still alive when teardown had done everything it could
// (docs/behaviour.md#teardown). Stop returns it; the session is over
// regardless.
type SurvivorsError struct {
	// Survivors lists what outlived teardown, in process-ID order.
	Survivors []Survivor
}

// Error names every survivor.
func (e *SurvivorsError) Error() string {
	var b strings.Builder
	b.WriteString("processes of the agent runtime survived teardown:")
	for _, s := range e.Survivors {
		b.WriteString(" ")
		b.WriteString(strconv.Itoa(s.PID))
		if s.Name != "" {
			b.WriteString(" (" + s.Name + ")")
		}
		if s.Host != "" {
			b.WriteString("@" + s.Host)
		}
	}
	return b.String()
}
