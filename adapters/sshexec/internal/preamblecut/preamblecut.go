// Package preamblecut is the test hook both SSH transports share for a
// launch whose preamble was cut short: the process a session then gets.
package preamblecut

import (
	"io"

	"github.com/acpdrive/acpdrive/ports"
)

// Process is the process of a launch whose preamble a test cut short: the
// short preamble has been written and stdin closed, so the remote side
// reads the preamble to its end of input and refuses it. What the session
// writes afterwards is discarded rather than failing on the closed pipe,
// as bytes lost on a broken link are: the launch then fails the way a
// real truncation does, by the remote command's exit and its message, and
// not by a local write error that comes before the remote side has even
// answered.
type Process struct {
	ports.Process
}

// Stdin discards every write.
func (Process) Stdin() io.WriteCloser { return discard{} }

// discard accepts and drops every write; Close does nothing.
type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) Close() error                { return nil }
