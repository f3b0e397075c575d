package app_test

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/localexec"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/fakeclock"
)

// scriptSession starts a session on one of the shell-script agents in
// testdata, a real process. Those agents end with `exec sleep 60`, which
// ignores the end of stdin, so the stop grace is short: teardown reaches
// SIGTERM quickly.
func scriptSession(t *testing.T, name string, opts ...option) *harness {
	t.Helper()
	o, rec, logs := baseOptions(t, append([]option{withStopGrace(300 * time.Millisecond)}, opts...)...)
	o.Settings.Command = []string{testdata(t, name)}
	o.Launcher = localexec.New(localexec.Options{})
	return startWith(t, o, rec, logs, "")
}

func TestPromptNotAcceptedInTime(t *testing.T) {
	t.Parallel()
	const bound = 300 * time.Millisecond
	h := scriptSession(t, "stops-reading.sh", withReadTimeout(bound))
	began := time.Now()
	res := h.turn(strings.Repeat("x", 4<<20)) // far beyond any pipe buffer
	took := time.Since(began)
	require.Equal(t, domain.OutcomeFailed, res.Outcome, res.Message())
	assert.Equal(t, domain.KindResponseTimeout, res.Err.Kind)
	assert.Equal(t, domain.MsgTimedOut, res.Err.Message)
	assert.GreaterOrEqual(t, took, bound)
}

func TestPromptWriteFailsWithoutEndOfStream(t *testing.T) {
	t.Parallel()
	// The write fails at once (EPIPE); the bound only has to outlast the
	// scheduling of the writer goroutine on a loaded machine, or the
	// hand-over's own read_timeout wins and the turn is response_timeout.
	const bound = 2 * time.Second
	h := scriptSession(t, "closes-stdin.sh", withReadTimeout(bound))
	// Wait until the script has closed its input (it then execs sleep).
	fd0 := "/proc/" + strconv.Itoa(h.sess.PID()) + "/fd/0"
	require.Eventually(t, func() bool { _, err := os.Readlink(fd0); return err != nil }, waitFor, 2*time.Millisecond)
	began := time.Now()
	res := h.turn(strings.Repeat("y", 1<<20))
	took := time.Since(began)
	require.Equal(t, domain.OutcomeFailed, res.Outcome, res.Message())
	assert.Equal(t, domain.KindPortExit, res.Err.Kind)
	assert.Equal(t, domain.MsgPromptSendFailed, res.Err.Message)
	// The stream's own end was awaited for read_timeout, and did not come.
	assert.GreaterOrEqual(t, took, bound)
}

// TestConnectionEndedWhileProcessAlive runs on a fake clock: the start
// waits 1 s (exitSettle) for the process to exit after its stream ended,
// and the failed start's teardown waits out the exit window.
func TestConnectionEndedWhileProcessAlive(t *testing.T) {
	t.Parallel()
	clock := fakeclock.New(epoch)
	o, rec, _ := baseOptions(t, withClock(clock))
	o.Settings.Command = []string{testdata(t, "closes-stdout.sh")}
	o.Launcher = localexec.New(localexec.Options{})
	sess, err := startDriven(clock, o)
	require.Nil(t, sess)
	var ae *domain.AgentError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, domain.KindPortExit, ae.Kind)
	assert.Equal(t, domain.MsgConnEndedBeforeResponding, ae.Message)
	assert.Equal(t, []string{"startup_failed:" + domain.MsgConnEndedBeforeResponding}, rec.Shape())
}
