package main_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
)

// TestRunSubagentsJSON: with --subagents every event of the child carries
// its id and its parent's, and the announcement and state change carry the
// child's labels and state.
func TestRunSubagentsJSON(t *testing.T) {
	t.Parallel()
	stdout, stderr, code := runIn(t, t.TempDir(), "run", "--json", "--subagents", "--command", testbin.Path(t)+" agent", "#subagent")
	require.Equal(t, 0, code, stderr)
	type childLine struct {
		Type      string `json:"type"`
		Message   string `json:"message"`
		SessionID string `json:"session_id"`
		Parent    string `json:"parent_session_id"`
		Child     *struct {
			Title, Description, State string
			StopReason                string `json:"stop_reason"`
		} `json:"child"`
	}
	var child []childLine
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var cl childLine
		require.NoError(t, json.Unmarshal([]byte(l), &cl), l)
		if cl.Parent != "" {
			assert.Equal(t, "child-1", cl.SessionID)
			assert.Equal(t, "ref-1", cl.Parent)
			child = append(child, cl)
		}
	}
	var types []string
	for _, c := range child {
		types = append(types, c.Type)
	}
	assert.Equal(t, []string{"child_started", "message_chunk", "notification", "tool_result", "context_usage", "child_state"}, types)
	require.NotNil(t, child[0].Child)
	assert.Equal(t, "Explore the repository", child[0].Child.Title)
	assert.Equal(t, "general-purpose", child[0].Child.Description)
	assert.Equal(t, "running", child[0].Child.State)
	assert.Equal(t, "end_turn", child[len(child)-1].Child.StopReason)
}

// TestRunSubagentsHuman: a person sees the child announced with its
// title, its activity and state indented under it, and the parent's reply
// as the reply; without --subagents none of the child shows.
func TestRunSubagentsHuman(t *testing.T) {
	t.Parallel()
	stdout, stderr, code := runIn(t, t.TempDir(), "run", "--subagents", "--command", testbin.Path(t)+" agent", "#subagent")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "▸ subagent child-1: Explore the repository (general-purpose) — running\n")
	assert.Contains(t, stdout, "  │ The child looked around.\n")
	assert.Contains(t, stdout, "  │ ⚙ execute ok")
	assert.Contains(t, stdout, "  │ state: idle (end_turn)\n")
	assert.Contains(t, stdout, "The parent is done.")
	assert.Less(t, strings.Index(stdout, "▸ subagent"), strings.Index(stdout, "│ The child looked around."))

	stdout, stderr, code = runIn(t, t.TempDir(), "run", "--command", testbin.Path(t)+" agent", "#subagent")
	require.Equal(t, 0, code, stderr)
	assert.NotContains(t, stdout, "subagent child-1")
	assert.NotContains(t, stdout, "The child looked around.")
	assert.Contains(t, stdout, "The parent is done.")
}

// TestRunSubagentsHumanTextBeforeIdle: a person reads a child's last
// message before the state that ends its work, on both protocol versions.
func TestRunSubagentsHumanTextBeforeIdle(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"1", "2"} {
		stdout, stderr, code := runIn(t, t.TempDir(), "run", "--subagents", "--protocol", v,
			"--command", testbin.Path(t)+" agent --protocol "+v, "#subagent-last-text")
		require.Equal(t, 0, code, stderr)
		text := strings.Index(stdout, "  │ The child reports back.\n")
		idle := strings.Index(stdout, "  │ state: idle (end_turn)\n")
		require.NotEqual(t, -1, text, stdout)
		require.NotEqual(t, -1, idle, stdout)
		assert.Less(t, text, idle, "v%s: the child's text comes before its idle:\n%s", v, stdout)
	}
}

// TestRunCeilingsReadTheParentsFigures: --max-cost and
// --max-context-fraction decide on the parent's own figures: a child's
// cumulative cost (2.00 USD) and context use are the child's, so the run
// goes on to its second prompt.
func TestRunCeilingsReadTheParentsFigures(t *testing.T) {
	t.Parallel()
	stdout, stderr, code := runIn(t, t.TempDir(), "run", "--json", "--subagents", "--max-cost", "1", "--max-context-fraction", "0.9",
		"--command", testbin.Path(t)+" agent", "#subagent-usage", "#subagent-usage")
	require.Equal(t, 0, code, stderr)
	run := wireRun(t, stdout)
	assert.Equal(t, float64(2), run["turns"], "the child's figures stop nothing")
	assert.Nil(t, run["stopped"])
	assert.Equal(t, []any{map[string]any{"amount": 0.3, "currency": "USD"}}, run["cost"], "the parent's cost alone")
}
