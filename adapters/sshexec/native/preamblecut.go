package native

import (
	"io"

	"github.com/acpdrive/acpdrive/ports"
)

// cutPreambleProcess is the process of a launch whose preamble a test cut
// short (Launcher.preambleCut): the short preamble has been written and
// stdin closed, so the remote side reads the preamble to its end of input
// and refuses it. What the session writes afterwards is discarded rather
// than failing on the closed pipe, as bytes lost on a broken link are: the
// launch then fails the way a real truncation does, by the remote
// command's exit and its message, and not by a local write error that
// comes before the remote side has even answered.
type cutPreambleProcess struct {
	ports.Process
}

// Stdin discards every write.
func (cutPreambleProcess) Stdin() io.WriteCloser { return discardWriteCloser{} }

// discardWriteCloser accepts and drops every write; Close does nothing.
type discardWriteCloser struct{}

func (discardWriteCloser) Write(b []byte) (int, error) { return len(b), nil }
func (discardWriteCloser) Close() error                { return nil }
