package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
)

// TestBatchSharesOneProcess: acpdrive batch runs every task of a
// TASKS.jsonl, its sessions on one shared runtime process, and prints one
// JSON line per task; a failed task does not stop the others and makes the
// exit status 1 (docs/behaviour.md#runtime-host).
func TestBatchSharesOneProcess(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tasks := filepath.Join(dir, "tasks.jsonl")
	require.NoError(t, os.WriteFile(tasks, []byte(
		`{"id":"a","prompt":"alpha"}`+"\n"+
			`{"id":"b","prompts":["beta one","beta two"]}`+"\n"+
			`{"id":"c","prompt":"#prompt-error"}`+"\n"+
			`{"id":"d","prompt":"delta"}`+"\n"), 0o600))
	cmd := testbin.Path(t) + " agent --scenario multi-session"
	stdout, stderr, code := runIn(t, dir, "batch", "--json", "--parallel", "4", "--sessions-per-process", "4", "--command", cmd, tasks)
	assert.Equal(t, 1, code, stderr)
	type line struct {
		Type        string `json:"type"`
		ID          string `json:"id"`
		SessionID   string `json:"session_id"`
		AgentPID    int    `json:"agent_pid"`
		Completed   bool   `json:"completed"`
		TurnResults []struct {
			Outcome string `json:"outcome"`
			Reply   string `json:"reply"`
		} `json:"turn_results"`
	}
	got := map[string]line{}
	pids := map[int]bool{}
	for _, text := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var l line
		require.NoError(t, json.Unmarshal([]byte(text), &l), text)
		assert.Equal(t, "task_result", l.Type)
		got[l.ID] = l
		pids[l.AgentPID] = true
	}
	require.Len(t, got, 4, stdout)
	assert.Len(t, pids, 1, "one shared process")
	assert.True(t, got["a"].Completed)
	assert.Equal(t, "alpha", got["a"].TurnResults[0].Reply)
	require.Len(t, got["b"].TurnResults, 2)
	assert.Equal(t, "beta two", got["b"].TurnResults[1].Reply)
	assert.False(t, got["c"].Completed)
	assert.True(t, got["d"].Completed)
}
