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

// sessionsScript advertises list, delete and fork; session/list answers
// two pages.
const sessionsScript = `{"initialize":{"agentCapabilities":{"loadSession":false,"promptCapabilities":{},"mcpCapabilities":{"http":false,"sse":false},"sessionCapabilities":{"list":{},"delete":{},"fork":{}}}},
 "methods":{"session/list":[
  {"result":{"sessions":[{"sessionId":"s-1","cwd":"/w/one","title":"first run","updatedAt":"2026-12-01T10:00:00Z"}],"nextCursor":"page-2"}},
  {"result":{"sessions":[{"sessionId":"s-2","cwd":"/w/two","title":"second\nrun"}]}}]}}`

// agentWith is the --command of the reference agent serving script.
func agentWith(t *testing.T, script string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "script.json")
	require.NoError(t, os.WriteFile(path, []byte(script), 0o600))
	return testbin.Path(t) + " agent --script " + path
}

// TestSessionsListJSONAndHuman: every page is listed, as one JSON object
// or as a table for a person (a title kept on its row).
func TestSessionsListJSONAndHuman(t *testing.T) {
	t.Parallel()
	cmd := agentWith(t, sessionsScript)
	stdout, stderr, code := runIn(t, t.TempDir(), "sessions", "list", "--json", "--command", cmd)
	require.Equal(t, 0, code, stderr)
	var got struct {
		Type     string `json:"type"`
		Sessions []struct {
			ID        string `json:"session_id"`
			CWD       string `json:"cwd"`
			Title     string `json:"title"`
			UpdatedAt string `json:"updated_at"`
		} `json:"sessions"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &got), stdout)
	assert.Equal(t, "session_list", got.Type)
	require.Len(t, got.Sessions, 2)
	assert.Equal(t, "s-1", got.Sessions[0].ID)
	assert.Equal(t, "first run", got.Sessions[0].Title)
	assert.Equal(t, "2026-12-01T10:00:00Z", got.Sessions[0].UpdatedAt)
	assert.Equal(t, "s-2", got.Sessions[1].ID)

	stdout, stderr, code = runIn(t, t.TempDir(), "sessions", "list", "--command", cmd)
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 3, stdout)
	assert.Contains(t, lines[0], "SESSION")
	assert.Contains(t, lines[1], "s-1")
	assert.Contains(t, lines[1], "first run")
	assert.Contains(t, lines[2], "second run")
}

// TestSessionsDelete: the id is deleted; a runtime that does not advertise
// delete is exit 3 naming the capability; usage errors are exit 2.
func TestSessionsDelete(t *testing.T) {
	t.Parallel()
	stdout, stderr, code := runIn(t, t.TempDir(), "sessions", "delete", "--json", "--command", agentWith(t, sessionsScript), "s-1")
	require.Equal(t, 0, code, stderr)
	assert.JSONEq(t, `{"type":"session_deleted","session_id":"s-1"}`, stdout)

	lines, _, code := run(t, "sessions", "delete", "--json", "--command", testbin.Path(t)+" agent", "s-1")
	assert.Equal(t, 3, code)
	require.Len(t, lines, 1)
	assert.Equal(t, "sessions_failed", lines[0].Type)
	assert.Equal(t, "agent_not_found", lines[0].ErrorKind)
	assert.Contains(t, lines[0].Message, "sessionCapabilities.delete")

	_, stderr, code = runIn(t, t.TempDir(), "sessions", "list", "--command", testbin.Path(t)+" agent")
	assert.Equal(t, 3, code)
	assert.Contains(t, stderr, "does not advertise sessionCapabilities.list")

	for _, args := range [][]string{{"sessions"}, {"sessions", "rename"}, {"sessions", "delete"}, {"sessions", "delete", "a", "b"}, {"sessions", "list", "extra"}} {
		_, _, code = runIn(t, t.TempDir(), args...)
		assert.Equal(t, 2, code, "%v", args)
	}
}

// TestRunFork: run --fork starts from the named session and run_result
// names both ids; a runtime without fork is exit 3; --fork with --resume
// is exit 2.
func TestRunFork(t *testing.T) {
	t.Parallel()
	stdout, stderr, code := runIn(t, t.TempDir(), "run", "--json", "--command", agentWith(t, sessionsScript), "--fork", "s-1", "hi")
	require.Equal(t, 0, code, stderr)
	var last struct {
		Type       string `json:"type"`
		SessionID  string `json:"session_id"`
		ForkedFrom string `json:"forked_from"`
	}
	out := strings.Split(strings.TrimSpace(stdout), "\n")
	require.NoError(t, json.Unmarshal([]byte(out[len(out)-1]), &last))
	assert.Equal(t, "run_result", last.Type)
	assert.Equal(t, "fork-1", last.SessionID)
	assert.Equal(t, "s-1", last.ForkedFrom)

	stdout, stderr, code = runIn(t, t.TempDir(), "run", "--command", agentWith(t, sessionsScript), "--fork", "s-1", "hi")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "session fork-1")
	assert.Contains(t, stdout, "forked from s-1")

	lines, _, code := run(t, "run", "--json", "--command", testbin.Path(t)+" agent", "--fork", "s-1", "hi")
	assert.Equal(t, 3, code)
	failed := ofType(lines, "startup_failed")
	require.Len(t, failed, 1)
	assert.Equal(t, "agent_not_found", failed[0].ErrorKind)
	assert.Contains(t, failed[0].Message, "sessionCapabilities.fork")

	_, stderr, code = runIn(t, t.TempDir(), "run", "--fork", "a", "--resume", "b", "hi")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "exclude each other")
}
