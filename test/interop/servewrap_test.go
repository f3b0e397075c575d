//go:build interop

package interop

import (
	"bufio"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// startAcpdriveServe serves the rig's runtime (its launch command under
// `env -i` with the rig's environment) with `acpdrive serve` at listen
// and returns the URL it prints.
func startAcpdriveServe(t *testing.T, r *rig, listen string) string {
	t.Helper()
	args := append([]string{"serve", "--listen", listen, "--", "env", "-i"}, r.envList()...)
	args = append(args, r.launchCommand()...)
	cmd := exec.Command(testbin.Path(t), args...)
	cmd.Dir = r.workspace
	cmd.Stderr = r.logs
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "acpdrive serve printed no URL")
	return strings.TrimSpace(line)
}

// TestCurrentReleasesThroughServe: the current Claude and codex adapters
// served by `acpdrive serve` (tcp, and Streamable HTTP) give two turns
// the events and outcomes of the same two turns on stdio, and the
// session is closed through the protocol where the runtime offers it
// (docs/behaviour.md#network).
func TestCurrentReleasesThroughServe(t *testing.T) {
	t.Parallel()
	for _, c := range currentRows() {
		for _, listen := range []string{"tcp://127.0.0.1:0", "http://127.0.0.1:0"} {
			name := c.row + "/" + listen[:strings.Index(listen, ":")]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				script := func(srv *fakes.Server) {
					srv.Script(
						fakes.TextReply(c.usage[0], "First ", "answer."),
						fakes.TextReply(c.usage[1], "Second ", "answer."),
					)
				}
				stdio, srv := c.rig(t, c.row)
				script(srv)
				sess := stdio.mustStart()
				want := []outcome{outcomeOf(stdio.turn(sess, "Say one thing.")), outcomeOf(stdio.turn(sess, "Say another."))}
				stdio.stop(sess)
				wantClose := contains(stdio.wire.methodsOut(), "session/close")

				r, srv := c.rig(t, c.row)
				script(srv)
				url := startAcpdriveServe(t, r, listen)
				sess = urlSession(t, r, url)
				got := []outcome{outcomeOf(r.turn(sess, "Say one thing.")), outcomeOf(r.turn(sess, "Say another."))}
				stopURL(t, sess)
				assert.Equal(t, want, got)
				assert.Equal(t, []outcome{completed, completed}, got)
				assertShape(t, comparableShape(stdio.shape()), comparableShape(r.shape()))
				assert.Equal(t, wantClose, contains(r.wire.methodsOut(), "session/close"), "closed through the protocol as on stdio")
			})
		}
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
