//go:build linux

package main_test

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/internal/testsupport/proctest"
)

// heldListed is a line of acpdrive held --json.
type heldListed struct {
	SessionRef     string   `json:"session_ref"`
	PID            int      `json:"pid"`
	State          string   `json:"state"`
	Runtime        []string `json:"runtime"`
	Host           *string  `json:"host"`
	Turn           string   `json:"turn"`
	IdleMS         *int64   `json:"idle_ms"`
	LastStopReason *string  `json:"last_stop_reason"`
}

// listHeld is acpdrive held --json's one entry.
func listHeld(t *testing.T, env []string) heldListed {
	t.Helper()
	stdout, stderr, code := runEnv(t, t.TempDir(), env, "held", "--json")
	require.Equal(t, 0, code, stderr)
	var e heldListed
	require.NoError(t, json.Unmarshal([]byte(stdout), &e), stdout)
	return e
}

// TestHeldListsTurnState: acpdrive held shows a held session's runtime,
// host (none: this machine), turn state and, once its turn ended with no
// client attached, idle time and the turn's stop reason, in JSON and in
// its human line (docs/behaviour.md#held-sessions).
func TestHeldListsTurnState(t *testing.T) {
	t.Parallel()
	env := []string{"XDG_RUNTIME_DIR=" + shortDir(t)}
	marker := "held-list-" + strconv.Itoa(os.Getpid())
	ref := killedHeldRun(t, env, marker, "10m")
	t.Cleanup(func() { _, _, _ = runEnv(t, t.TempDir(), env, "release", ref) })

	e := listHeld(t, env)
	assert.Equal(t, ref, e.SessionRef)
	assert.Equal(t, "held", e.State)
	assert.Contains(t, strings.Join(e.Runtime, " "), "--agent-name "+marker)
	assert.Nil(t, e.Host, "a local runtime names no host")
	// The slow turn runs for seconds after the run's first chunk; the
	// runtime may still finish it before held reads.
	if e.Turn == "running" {
		assert.Nil(t, e.IdleMS)
		assert.Nil(t, e.LastStopReason)
	}

	require.Eventually(t, func() bool { return listHeld(t, env).Turn == "idle" }, time.Minute, 50*time.Millisecond,
		"the turn's answer ends it though no client is attached")
	e = listHeld(t, env)
	require.NotNil(t, e.IdleMS)
	assert.GreaterOrEqual(t, *e.IdleMS, int64(0))
	require.NotNil(t, e.LastStopReason)
	assert.Equal(t, "end_turn", *e.LastStopReason)

	stdout, stderr, code := runEnv(t, t.TempDir(), env, "held")
	require.Equal(t, 0, code, stderr)
	line := strings.TrimSuffix(stdout, "\n")
	assert.NotContains(t, line, "\n", "one line a session")
	assert.True(t, strings.HasPrefix(line, "held  "+ref+"  pid "+strconv.Itoa(e.PID)+"  host local  idle "), line)
	assert.Contains(t, line, "  last end_turn  runtime ")
	assert.Contains(t, line, "--agent-name "+marker)

	_, stderr, code = runEnv(t, t.TempDir(), env, "release", ref)
	require.Equal(t, 0, code, stderr)
	proctest.WaitCmdlineGone(t, marker, 30*time.Second)
}
