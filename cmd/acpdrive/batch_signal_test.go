//go:build unix

package main_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/internal/testsupport/proctest"
	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
)

// TestBatchSIGINT: a SIGINT cancels the running turns and starts no
// further task; every task still has its line, the running ones
// turn_cancelled, the one never started "interrupted before the task
// started", and the exit status is 1 (docs/behaviour.md#batch).
func TestBatchSIGINT(t *testing.T) {
	dir := t.TempDir()
	tasks := writeTasks(t, dir, `{"id":"a","prompt":"#wait-cancel"}`, `{"id":"b","prompt":"#wait-cancel"}`, `{"id":"c","prompt":"never sent"}`)
	cmd := exec.Command(testbin.Path(t), "batch", "--json", "--parallel", "2", "--log-level", "info",
		"--command", testbin.Path(t)+" agent --scenario multi-session", tasks)
	cmd.Dir = dir
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(stderr)
	created := 0
	for sc.Scan() {
		// Both running tasks have their session: then the signal.
		if strings.Contains(sc.Text(), `msg="agent session created"`) {
			if created++; created == 2 {
				require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
			}
		}
	}
	err = cmd.Wait()
	require.Error(t, err)
	assert.Equal(t, 1, cmd.ProcessState.ExitCode())
	got := taskLines(t, stdout.String(), 3)
	for _, id := range []string{"a", "b"} {
		l := got[id]
		assert.False(t, l.Completed, id)
		assert.Equal(t, "turn_cancelled", l.ErrorKind, "%s: %+v", id, l)
		proctest.WaitGroupEmpty(t, l.AgentPID, 2*time.Second)
	}
	assert.Equal(t, "turn_cancelled", got["c"].ErrorKind)
	assert.Equal(t, "interrupted before the task started", got["c"].Message)
	assert.Empty(t, got["c"].SessionID)
}
