//go:build linux

package main_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBatchAtURL: `acpdrive batch --url` runs every task on the runtime
// served at the URL (one connection a session, each task's line naming
// the URL as its host, no process of this machine); a task's
// settings.url places that task on another server; a URL the dialer
// refuses, and a task's own command under the batch's URL, are
// configuration errors, exit 2 (docs/behaviour.md#network).
func TestBatchAtURL(t *testing.T) {
	t.Parallel()
	url := serveAt(t, "tcp://127.0.0.1:0", nil, nil, "--scenario", "multi-session")
	other := serveAt(t, "tcp://127.0.0.1:0", nil, nil, "--scenario", "multi-session")
	dir := t.TempDir()

	t.Run("three tasks on one server", func(t *testing.T) {
		tasks := writeTasks(t, t.TempDir(),
			`{"id":"a","prompt":"alpha"}`,
			`{"id":"b","prompts":["beta one","beta two"]}`,
			`{"id":"c","prompt":"gamma"}`)
		stdout, stderr, code := runIn(t, dir, "batch", "--json", "--parallel", "3", "--url", url, tasks)
		require.Equal(t, 0, code, stderr)
		got := taskLines(t, stdout, 3)
		for id, l := range got {
			assert.True(t, l.Completed, "task %s: %+v", id, l)
			assert.Equal(t, url, l.Host, "a task at a URL names it as its host")
			assert.Zero(t, l.AgentPID, "no runtime process of this machine")
			assert.NotEmpty(t, l.SessionID)
		}
		assert.Equal(t, "alpha", got["a"].TurnResults[0].Reply)
		require.Len(t, got["b"].TurnResults, 2)
		assert.Equal(t, "beta two", got["b"].TurnResults[1].Reply)
	})

	t.Run("sessions sharing a connection", func(t *testing.T) {
		tasks := writeTasks(t, t.TempDir(),
			`{"id":"a","prompt":"alpha"}`,
			`{"id":"b","prompt":"beta"}`,
			`{"id":"c","prompt":"gamma"}`)
		stdout, stderr, code := runIn(t, dir, "batch", "--json", "--parallel", "3", "--sessions-per-process", "3",
			"--keep-warm", "1h", "--url", other, tasks)
		require.Equal(t, 0, code, stderr)
		ids := map[string]bool{}
		for id, l := range taskLines(t, stdout, 3) {
			assert.True(t, l.Completed, "task %s: %+v", id, l)
			ids[l.SessionID] = true
		}
		assert.Len(t, ids, 3, "three sessions of the one runtime behind one connection")
	})

	t.Run("a task's settings name its URL", func(t *testing.T) {
		tasks := writeTasks(t, t.TempDir(),
			`{"id":"local","prompt":"here"}`,
			`{"id":"served","prompt":"there","settings":{"url":"`+other+`"}}`,
			`{"id":"batch","prompt":"again"}`)
		stdout, stderr, code := runIn(t, dir, "batch", "--json", "--url", url, tasks)
		require.Equal(t, 0, code, stderr)
		got := taskLines(t, stdout, 3)
		assert.Equal(t, url, got["local"].Host)
		assert.Equal(t, other, got["served"].Host)
		assert.Equal(t, "there", got["served"].TurnResults[0].Reply)
		assert.Equal(t, url, got["batch"].Host)
	})

	for _, tc := range []struct {
		name    string
		args    []string
		task    string
		message string
	}{
		{"an unknown scheme", []string{"--url", "ftp://127.0.0.1:1"}, `{"id":"a","prompt":"x"}`, "ftp"},
		{"a task's bad URL", nil, `{"id":"a","prompt":"x","settings":{"url":"gopher://127.0.0.1:1"}}`, "gopher"},
		{"--url with --command", []string{"--url", url, "--command", "true"}, `{"id":"a","prompt":"x"}`, "--url and --command are exclusive"},
		{"a task's command under --url", []string{"--url", url}, `{"id":"a","prompt":"x","settings":{"command":"true"}}`, "agent.command and the batch's URL are exclusive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tasks := writeTasks(t, t.TempDir(), tc.task)
			stdout, stderr, code := runIn(t, dir, append(append([]string{"batch", "--json"}, tc.args...), tasks)...)
			assert.Equal(t, 2, code, "a configuration error; stderr: %s", stderr)
			got := taskLines(t, stdout, 1)
			assert.False(t, got["a"].Completed)
			assert.Equal(t, "configuration_invalid", got["a"].Reason)
			assert.Contains(t, got["a"].Message, tc.message)
		})
	}
}
