package main_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/refagent"
)

// TestReferenceAgentDocUpdatesRow: docs/reference-agent.md's row of the
// updates turn names every update the turn sends, and quotes its chunks.
func TestReferenceAgentDocUpdatesRow(t *testing.T) {
	data, err := os.ReadFile("../../docs/reference-agent.md")
	require.NoError(t, err)
	var row string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "| `updates` |") {
			row = l
		}
	}
	require.NotEmpty(t, row)
	script, ok := refagent.Scenario("updates")
	require.True(t, ok)
	turn := script.Turns["updates"]
	require.NotNil(t, turn)
	wire := map[string]string{
		refagent.StepThought: "agent_thought_chunk", refagent.StepPlan: "plan",
		refagent.StepAvailableCommands: "available_commands_update", refagent.StepCurrentMode: "current_mode_update",
		refagent.StepConfigOptions: "config_option_update", refagent.StepSessionInfo: "session_info_update",
		refagent.StepUsage: "usage_update", refagent.StepToolCall: "tool_call", refagent.StepToolCallUpdate: "tool_call_update",
	}
	for _, st := range turn.Steps {
		switch st.Step {
		case refagent.StepText:
			if st.Session == "" {
				assert.Contains(t, row, `"`+st.Text+`"`, "the row quotes the chunk")
			} else {
				assert.Contains(t, row, "`"+st.Session+"`")
			}
		case refagent.StepUpdate:
			var u struct {
				SessionUpdate string `json:"sessionUpdate"`
			}
			require.NoError(t, json.Unmarshal(st.Update, &u))
			assert.Contains(t, row, "`"+u.SessionUpdate+"`")
		case refagent.StepRaw:
			var m struct {
				Method string `json:"method"`
			}
			require.NoError(t, json.Unmarshal([]byte(st.Line), &m))
			assert.Contains(t, row, "`"+m.Method+"`")
		case refagent.StepStop:
			assert.Contains(t, row, "`"+st.StopReason+"`")
		default:
			name, ok := wire[st.Step]
			require.True(t, ok, "step %s", st.Step)
			assert.Contains(t, row, "`"+name+"`")
		}
	}
}

// TestProbeContinuationRouteAgrees: probe's --json names the continuation
// route as its human output does.
func TestProbeContinuationRouteAgrees(t *testing.T) {
	human, _, code := runIn(t, t.TempDir(), "probe")
	require.Equal(t, 0, code)
	assert.Regexp(t, `(?m)^continuation route +none \(session/new only\)$`, human)
	stdout, _, code := runIn(t, t.TempDir(), "probe", "--json")
	require.Equal(t, 0, code)
	assert.Equal(t, "none (session/new only)", lastObject(t, stdout)["continuation_route"])
}
