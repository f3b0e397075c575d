//go:build interop

package interop

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/test/fakes"
)

// Sessions as resources
// (docs/behaviour.md#sessions-as-resources-and-child-sessions) on today's
// Claude and Codex adapters: two runs in one workspace are both listed
// with their titles; `run --fork ID` starts a new session whose first
// model call carries ID's history; `sessions delete ID` removes ID from
// the list.

// listedSession is one entry of `sessions list --json`.
type listedSession struct {
	ID    string `json:"session_id"`
	CWD   string `json:"cwd"`
	Title string `json:"title"`
}

// listSessions runs `acpdrive sessions list --json` on the rig's runtime,
// filtered to the rig's workspace.
func listSessions(t *testing.T, r *rig) []listedSession {
	t.Helper()
	out, stderr, code := r.acpdrive(append([]string{"sessions", "list", "--json"}, r.launchFlags()...)...)
	require.Equal(t, 0, code, stderr)
	var got struct {
		Type     string          `json:"type"`
		Sessions []listedSession `json:"sessions"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	require.Equal(t, "session_list", got.Type)
	return got.Sessions
}

func listedIDs(list []listedSession) map[string]string {
	out := map[string]string{}
	for _, s := range list {
		out[s.ID] = s.Title
	}
	return out
}

// runLast runs `acpdrive run --json` with flags and returns its last line.
func runLast(t *testing.T, r *rig, flags []string, prompt string) map[string]any {
	t.Helper()
	args := append([]string{"run", "--json"}, r.launchFlags()...)
	args = append(args, "--stall-timeout", "0", "--turn-timeout", "3m", "--no-measure")
	args = append(append(args, flags...), prompt)
	out, stderr, code := r.acpdrive(args...)
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var last map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &last), out)
	require.Equal(t, "run_result", last["type"], out)
	return last
}

func TestSessionsListForkDelete(t *testing.T) {
	for _, c := range currentRows() {
		t.Run(c.row, func(t *testing.T) {
			r, srv := c.rig(t, c.row)
			srv.Aside(c.titleMarker, fakes.TextReply(fakes.Usage{Input: 50, Output: 4}, "Remembering words"))
			srv.Script(
				fakes.TextReply(fakes.Usage{Input: 100, Output: 6}, firstReply),
				fakes.TextReply(fakes.Usage{Input: 100, Output: 6}, "The word is zucchini."),
				fakes.TextReply(fakes.Usage{Input: 100, Output: 6}, secondReply),
			)
			first := runLast(t, r, nil, firstPrompt)["session_id"].(string)
			second := runLast(t, r, nil, "remember the word zucchini")["session_id"].(string)
			require.NotEqual(t, first, second)

			listed := listedIDs(listSessions(t, r))
			t.Logf("%s sessions: %v", c.row, listed)
			require.Contains(t, listed, first, "the first run is listed")
			require.Contains(t, listed, second, "the second run is listed")
			assert.NotEmpty(t, listed[first], "listed with a title")
			assert.NotEmpty(t, listed[second], "listed with a title")

			forked := runLast(t, r, []string{"--fork", first}, secondPrompt)
			forkID, _ := forked["session_id"].(string)
			assert.Equal(t, first, forked["forked_from"], "run_result names the session forked from")
			require.NotEmpty(t, forkID)
			assert.NotEqual(t, first, forkID, "a fork is a new session")
			calls := srv.ModelCalls()
			require.Len(t, calls, 3, srv.Describe())
			last := calls[2]
			assert.True(t, last.BodyContains(secondPrompt), "the fork's prompt reaches the model")
			assert.True(t, last.BodyContains(firstPrompt), "the forked session's history reaches the model")
			assert.True(t, last.BodyContains(firstReply), "the forked session's history reaches the model")
			assert.False(t, last.BodyContains("zucchini"), "only the forked session's history")

			out, stderr, code := r.acpdrive(append([]string{"sessions", "delete", "--json"}, append(r.launchFlags(), first)...)...)
			require.Equal(t, 0, code, stderr)
			assert.JSONEq(t, `{"type":"session_deleted","session_id":"`+first+`"}`, out)
			after := listedIDs(listSessions(t, r))
			t.Logf("%s sessions after the delete: %v", c.row, after)
			assert.NotContains(t, after, first, "the deleted session is no longer listed")
			assert.Contains(t, after, second, "the other session stays")
		})
	}
}
