//go:build interop

package interop

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
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
	t.Parallel()
	for _, c := range currentRows() {
		t.Run(c.row, func(t *testing.T) {
			r, srv := c.rig(t, c.row)
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

// Subagents on the Claude adapter 0.101.0: the model's first reply calls
// the Agent tool; the child makes its own model call and answers; the
// parent finishes. With Settings.Subagents the child is a child session
// with its states and its own text; without, the same run is one ordinary
// tool call of the parent.

const (
	childPrompt = "Say hello from the child"
	childReply  = "Hello from the child."
)

func withSubagents(o *app.Options) { o.Settings.Subagents = true }

// askingMode starts Claude in its asking mode, `default`, through the
// workspace's own .claude/settings.json: 0.101.0 starts in `auto`, whose
// classifier ("You are a security monitor…") makes model calls of its own
// for every tool call and grants what it likes.
func askingMode(t *testing.T, r *rig) {
	writeFile(t, filepath.Join(r.workspace, ".claude", "settings.json"), `{"permissions":{"defaultMode":"default"}}`)
}

// agentCall is the model reply that launches a subagent.
func agentCall(prompt string) fakes.Reply {
	return fakes.Reply{
		Text: []string{"Delegating."},
		Tool: &fakes.ToolCall{ID: "toolu_agent_1", Name: "Agent", Args: map[string]any{
			"description": "Look around", "prompt": prompt, "subagent_type": "general-purpose",
		}},
		Usage: fakes.Usage{Input: 100, Output: 9},
	}
}

func TestClaudeSubagent(t *testing.T) {
	t.Parallel()
	for _, followed := range []bool{true, false} {
		name := "without subagents"
		if followed {
			name = "with subagents"
		}
		t.Run(name, func(t *testing.T) {
			r, srv := claudeRigOf(t, "claude-current")
			askingMode(t, r)
			srv.Aside("You are naming a coding session", fakes.TextReply(fakes.Usage{Input: 50, Output: 4}, "Delegation"))
			// The adapter runs the Agent tool in the background: the parent
			// goes on at once and is told again when the child is done, so
			// the child's call and the parent's two race. Every call after
			// the first gets the same reply.
			srv.Script(agentCall(childPrompt))
			srv.SetFallback(fakes.TextReply(fakes.Usage{Input: 80, Output: 5}, childReply))
			var opts []optFn
			if followed {
				opts = append(opts, withSubagents)
			}
			sess := r.mustStart(opts...)
			res := r.turn(sess, "delegate a greeting to a subagent")
			require.Equal(t, completed, outcomeOf(res), res.Message())
			assert.Equal(t, childReply, sess.LastMessage().Text, "the parent finishes with a reply of its own")
			r.stop(sess)

			calls := srv.ModelCalls()
			require.GreaterOrEqual(t, len(calls), 3, srv.Describe())
			childCalls := 0
			for _, c := range calls[1:] {
				if c.BodyContains(`"text":"` + childPrompt) {
					childCalls++
				}
			}
			assert.Equal(t, 1, childCalls, "the child makes its own model call with the delegated prompt")

			var started, states, childText []string
			ordinaryTools := 0
			for _, ev := range r.rec.All() {
				if ev.ParentSessionID == "" {
					if ev.Type == domain.EventToolResult {
						ordinaryTools++
					}
					continue
				}
				assert.Equal(t, sess.ID(), ev.ParentSessionID, "%s names the parent", ev.Type)
				switch ev.Type {
				case domain.EventChildStarted:
					started = append(started, ev.SessionID+" "+ev.Message)
				case domain.EventChildState:
					states = append(states, ev.Message)
				case domain.EventNotification:
					childText = append(childText, ev.Message)
				}
			}
			t.Logf("children %v states %v text %v tools %d", started, states, childText, ordinaryTools)
			var init wireMsg
			for _, m := range r.wire.messages() {
				if m.Out && m.Method == "initialize" {
					init = m
				}
			}
			require.NotEmpty(t, init.Params, "initialize was sent")
			if !followed {
				assert.NotContains(t, string(init.Params), "subagents")
				assert.Empty(t, started)
				assert.Nil(t, sess.Children())
				assert.Equal(t, 1, ordinaryTools, "the Agent tool is one ordinary tool call of the parent")
				return
			}
			assert.Contains(t, string(init.Params), `"subagents":{}`)
			require.Len(t, started, 1, "one child announced")
			assert.Contains(t, states, "idle (end_turn)", "the child's work ends end_turn")
			assert.Contains(t, childText, childReply, "the child's own text, under its id")
			kids := sess.Children()
			require.Len(t, kids, 1)
			assert.Equal(t, sess.ID(), kids[0].ParentID)
			assert.Equal(t, domain.ChildIdle, kids[0].State)
			assert.NotContains(t, r.rec.Text(), childReply, "the child's text is not the parent's reply")
		})
	}
}

// TestClaudeSubagentRefusedWrite: the child asks to write a file (Claude
// in its asking mode, `default`, set through the workspace's own
// .claude/settings.json); acpdrive refuses, ends the child, the parent
// finishes, and nothing is written.
func TestClaudeSubagentRefusedWrite(t *testing.T) {
	t.Parallel()
	r, srv := claudeRigOf(t, "claude-current")
	askingMode(t, r)
	srv.Aside("You are naming a coding session", fakes.TextReply(fakes.Usage{Input: 50, Output: 4}, "Delegation"))
	srv.Script(
		agentCall("Write the word interop into out.txt"),
		fakes.Reply{
			Text:  []string{"Writing the file."},
			Tool:  &fakes.ToolCall{ID: "toolu_child_write", Name: "Bash", Args: map[string]any{"command": "echo interop > out.txt", "description": "Write out.txt"}},
			Usage: fakes.Usage{Input: 90, Output: 8},
		},
	)
	srv.SetFallback(fakes.TextReply(fakes.Usage{Input: 1, Output: 1}, "I could not write it."))
	sess := r.mustStart(withSubagents)
	res := r.turn(sess, "delegate writing out.txt to a subagent")
	require.Equal(t, completed, outcomeOf(res), res.Message())
	r.stop(sess)
	assertNotWritten(t, r)

	perm, ok := r.wire.request("session/request_permission")
	require.True(t, ok, "the child asked for permission")
	kids := sess.Children()
	require.Len(t, kids, 1)
	child := kids[0].ID
	var refusals []string
	for _, ev := range r.rec.All() {
		if ev.Type == domain.EventNotification && ev.Message == domain.MsgPermissionRefused {
			refusals = append(refusals, ev.SessionID)
		}
	}
	require.Len(t, refusals, 1, "one refusal reported")
	if perm.sessionID() != child {
		// The adapter sometimes asks under the parent's session (its
		// choice): then it is the parent's request, refused as such, and no
		// child is ended for it.
		t.Logf("the adapter asked under session %s, not the child's", perm.sessionID())
		assert.Equal(t, sess.ID(), perm.sessionID(), "the request names the parent or the child")
		return
	}
	assert.Equal(t, []string{child}, refusals, "the refusal is reported as the child's")
	cancelled := false
	for _, m := range r.wire.messages() {
		if m.Out && m.Method == "session/cancel" && m.sessionID() == child {
			cancelled = true
		}
	}
	assert.True(t, cancelled, "the child was ended with session/cancel naming it")
	t.Logf("child %s: %+v", child, kids[0].ChildInfo)
}
