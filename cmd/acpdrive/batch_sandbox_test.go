//go:build linux

package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sandboxWriteScript is a runtime that shares its process (it advertises
// session/close) and whose turn "write" writes the file its argument
// names and reports "writeFile PATH: ok" or the error.
const sandboxWriteScript = `{"initialize":{"agentCapabilities":{"loadSession":false,"sessionCapabilities":{"close":{},"additionalDirectories":{}}}},
 "turns":{"write":{"steps":[{"step":"writeFile","fromArgument":true,"text":"written"},{"step":"stop","stopReason":"end_turn"}]}}}`

// TestBatchSandboxedTasksShareByWorkspace: sandboxed tasks share a process
// only with tasks of the same workspace and additional directories (the
// sandbox makes those writable for the whole process), and the additional
// directories are writable from the shared process; a task of another
// workspace, or not sandboxed, gets another process (docs/behaviour.md#batch).
func TestBatchSandboxedTasksShareByWorkspace(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap (bwrap) is not installed")
	}
	dir := t.TempDir()
	ws1, ws2, extra := t.TempDir(), t.TempDir(), t.TempDir()
	sandboxed := func(ws string, dirs ...string) string {
		if len(dirs) == 0 {
			return `"workspace":"` + ws + `","settings":{"sandbox":true}`
		}
		return `"workspace":"` + ws + `","settings":{"sandbox":true,"additional_directories":["` + dirs[0] + `"]}`
	}
	tasks := writeTasks(t, dir,
		`{"id":"s1","prompt":"#write `+filepath.Join(ws1, "one.txt")+`",`+sandboxed(ws1, extra)+`}`,
		`{"id":"s2","prompt":"#write `+filepath.Join(extra, "two.txt")+`",`+sandboxed(ws1, extra)+`}`,
		`{"id":"s3","prompt":"#write `+filepath.Join(ws2, "three.txt")+`",`+sandboxed(ws2)+`}`,
		`{"id":"plain","prompt":"#write `+filepath.Join(ws2, "four.txt")+`","workspace":"`+ws2+`"}`)
	stdout, stderr, code := runIn(t, dir, "batch", "--json", "--sessions-per-process", "4", "--keep-warm", "1h",
		"--command", agentWith(t, sandboxWriteScript), tasks)
	require.Equal(t, 0, code, "stdout: %s\nstderr: %s", stdout, stderr)
	got := taskLines(t, stdout, 4)
	for id, path := range map[string]string{"s1": filepath.Join(ws1, "one.txt"), "s2": filepath.Join(extra, "two.txt"),
		"s3": filepath.Join(ws2, "three.txt"), "plain": filepath.Join(ws2, "four.txt")} {
		assert.Equal(t, "writeFile "+path+": ok", got[id].TurnResults[0].Reply, id)
		data, err := os.ReadFile(path)
		require.NoError(t, err, id)
		assert.Equal(t, "written", string(data), id)
	}
	assert.Equal(t, got["s1"].AgentPID, got["s2"].AgentPID, "one workspace and directories: one sandboxed process")
	assert.NotEqual(t, got["s1"].AgentPID, got["s3"].AgentPID, "another workspace: another sandbox")
	assert.NotEqual(t, got["s3"].AgentPID, got["plain"].AgentPID, "not sandboxed: not in a sandbox's process")
	assert.NotEqual(t, got["s1"].AgentPID, got["plain"].AgentPID)
}
