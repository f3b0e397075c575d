package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// resultScript replies with a fenced JSON result to #result, with one
// that does not validate otherwise.
const resultScript = `{"turns":{
 "result":{"steps":[{"step":"text","text":"Done.\n` + "```json" + `\n{\"done\": true}\n` + "```" + `\n"},{"step":"stop","stopReason":"end_turn"}]},
 "prose":{"steps":[{"step":"text","text":"I did it."},{"step":"stop","stopReason":"end_turn"}]}}}`

// writeSchema writes an output schema file and returns its path.
func writeSchema(t *testing.T, schema string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "result.schema.json")
	require.NoError(t, os.WriteFile(path, []byte(schema), 0o600))
	return path
}

const cliSchema = `{"type":"object","properties":{"done":{"type":"boolean"}},"required":["done"]}`

// TestRunOutputSchemaJSON: turn_result and run_result carry the result
// and its source (docs/behaviour.md#structured-results).
func TestRunOutputSchemaJSON(t *testing.T) {
	t.Parallel()
	stdout, stderr, code := runIn(t, t.TempDir(), "run", "--json", "--command", agentWith(t, resultScript),
		"--output-schema", writeSchema(t, cliSchema), "#result go")
	require.Equal(t, 0, code, stderr)
	var turn, last map[string]any
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		switch m["type"] {
		case "turn_result":
			turn = m
		case "run_result":
			last = m
		}
	}
	require.NotNil(t, turn)
	assert.Equal(t, map[string]any{"done": true}, turn["result"])
	assert.Equal(t, "reply", turn["result_source"])
	assert.Equal(t, map[string]any{"done": true}, last["result"])
}

// TestRunOutputSchemaQuiet: --quiet prints the result alone.
func TestRunOutputSchemaQuiet(t *testing.T) {
	t.Parallel()
	stdout, stderr, code := runIn(t, t.TempDir(), "run", "--quiet", "--command", agentWith(t, resultScript),
		"--output-schema", writeSchema(t, cliSchema), "#result go")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "{\"done\":true}\n", stdout)
}

// TestRunOutputSchemaMissing: no valid result after the follow-ups is
// result_missing and exit status 5; the turn still completed.
func TestRunOutputSchemaMissing(t *testing.T) {
	t.Parallel()
	stdout, stderr, code := runIn(t, t.TempDir(), "run", "--json", "--command", agentWith(t, resultScript),
		"--output-schema", writeSchema(t, cliSchema), "--output-retries", "1", "#prose go")
	require.Equal(t, 5, code, stderr)
	assert.Contains(t, stdout, `"outcome":"turn_completed"`)
	assert.Contains(t, stdout, `"result_missing":"the reply holds no JSON object"`)
	assert.NotContains(t, stdout, `"result":`)
}

// TestRunOutputSchemaRefused: a schema that is not an object schema is
// refused at start (exit 2, agent_not_found, reason
// configuration_invalid), and by validate.
func TestRunOutputSchemaRefused(t *testing.T) {
	t.Parallel()
	schema := writeSchema(t, `{"type":"array"}`)
	stdout, _, code := runIn(t, t.TempDir(), "run", "--json", "--output-schema", schema, "hi")
	require.Equal(t, 2, code)
	assert.Contains(t, stdout, `"error_kind":"agent_not_found"`)
	assert.Contains(t, stdout, `"reason":"configuration_invalid"`)
	assert.Contains(t, stdout, "agent.output_schema: not an object schema")

	dir := t.TempDir()
	wf := "---\nagent:\n  kind: agent-client-protocol\n  command: x\n  output_schema: ./s.json\n---\n"
	require.NoError(t, os.WriteFile(dir+"/WORKFLOW.md", []byte(wf), 0o600))
	require.NoError(t, os.WriteFile(dir+"/s.json", []byte(`{"type":`), 0o600))
	stdout, _, code = runIn(t, dir, "validate", dir+"/WORKFLOW.md")
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "error agent.output_schema.invalid: agent.output_schema: ")
	require.NoError(t, os.WriteFile(dir+"/s.json", []byte(cliSchema), 0o600))
	stdout, _, code = runIn(t, dir, "validate", dir+"/WORKFLOW.md")
	assert.Equal(t, 0, code, stdout)
}

// toolScript calls acpdrive's result tool: first with arguments that do
// not validate, then corrected.
const toolScript = `{"turns":{"fix":{"steps":[
 {"step":"mcpCall","mcpServer":"acpdrive-result","mcpTool":"submit_result","mcpArguments":{"done":"yes"}},
 {"step":"mcpCall","mcpServer":"acpdrive-result","mcpTool":"submit_result","mcpArguments":{"done":true}},
 {"step":"text","text":"Submitted."},{"step":"stop","stopReason":"end_turn"}]}}}`

// TestRunOutputSchemaThroughTheTool: the CLI declares its own result
// server (acpdrive mcp-result); the corrected call is the result, source
// tool.
func TestRunOutputSchemaThroughTheTool(t *testing.T) {
	t.Parallel()
	stdout, stderr, code := runIn(t, t.TempDir(), "run", "--json", "--command", agentWith(t, toolScript),
		"--output-schema", writeSchema(t, cliSchema), "#fix go")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, `"result":{"done":true},"result_source":"tool"`)
	assert.Contains(t, stdout, `mcpCall submit_result error: the result does not validate`)
}

// turnsScript: #tool calls acpdrive's result tool with a valid result and
// echoes the prompt it received (so the reply shows whether the
// instruction was added); #prose replies without a result.
const turnsScript = `{"turns":{
 "tool":{"steps":[{"step":"mcpCall","mcpServer":"acpdrive-result","mcpTool":"submit_result","mcpArguments":{"done":true}},
  {"step":"echo"},{"step":"stop","stopReason":"end_turn"}]},
 "prose":{"steps":[{"step":"text","text":"I did it."},{"step":"stop","stopReason":"end_turn"}]}}}`

// jsonLines decodes run --json output, line by line.
func jsonLines(t *testing.T, stdout string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		out = append(out, m)
	}
	return out
}

// linesOfType is the lines of one type.
func linesOfType(lines []map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, l := range lines {
		if l["type"] == typ {
			out = append(out, l)
		}
	}
	return out
}

// TestRunOutputSchemaTurns: two prompts whose model calls the result
// tool in both turns. With output_schema_turns each (the default) both
// prompts carry the instruction and both turns have the result; with last
// (the flag, the WORKFLOW.md key, through --retries' Retrier too) the
// first prompt is sent as given, its call is answered "not asked", and it
// has neither result nor result_missing; the last turn has the result,
// and run_result carries it. --quiet prints the results alone: one line
// per turn that asked (docs/behaviour.md#structured-results).
func TestRunOutputSchemaTurns(t *testing.T) {
	t.Parallel()
	notAsked := "mcpCall submit_result error: not recorded: this turn does not ask for the result"
	for _, c := range []struct {
		name      string
		args      []string
		workflow  string // agent.output_schema_turns in a WORKFLOW.md; "" none
		firstAsks bool
	}{
		{name: "default", firstAsks: true},
		{name: "each", args: []string{"--output-schema-turns", "each"}, firstAsks: true},
		{name: "last", args: []string{"--output-schema-turns", "last"}},
		{name: "last with retries", args: []string{"--output-schema-turns=last", "--retries", "1"}},
		{name: "last from the workflow", workflow: "last"},
		{name: "the flag overrides the workflow", workflow: "last", args: []string{"--output-schema-turns", "each"}, firstAsks: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			command, schema := agentWith(t, turnsScript), writeSchema(t, cliSchema)
			base := []string{"run", "--command", command, "--output-schema", schema}
			if c.workflow != "" {
				wf := "---\nagent:\n  command: " + strconv.Quote(command) + "\n  output_schema: " + strconv.Quote(schema) +
					"\n  output_schema_turns: " + c.workflow + "\n---\n"
				require.NoError(t, os.WriteFile(filepath.Join(dir, "WORKFLOW.md"), []byte(wf), 0o600))
				base = []string{"run", "--workflow", filepath.Join(dir, "WORKFLOW.md")}
			}
			args := append(append(append([]string{}, base...), c.args...), "--json", "#tool one", "#tool two")
			stdout, stderr, code := runIn(t, dir, args...)
			require.Equal(t, 0, code, stderr)
			lines := jsonLines(t, stdout)
			turns := linesOfType(lines, "turn_result")
			require.Len(t, turns, 2, stdout)
			if c.firstAsks {
				assert.Equal(t, map[string]any{"done": true}, turns[0]["result"])
				assert.Contains(t, turns[0]["reply"], "[acpdrive]")
				assert.NotContains(t, stdout, notAsked)
			} else {
				assert.Equal(t, "#tool one", turns[0]["reply"], "the prompt as given")
				assert.NotContains(t, turns[0], "result")
				assert.NotContains(t, turns[0], "result_source")
				assert.NotContains(t, turns[0], "result_missing")
				assert.Equal(t, 1, strings.Count(stdout, notAsked))
			}
			assert.Equal(t, map[string]any{"done": true}, turns[1]["result"])
			assert.Equal(t, "tool", turns[1]["result_source"])
			assert.Contains(t, turns[1]["reply"], "[acpdrive]")
			runResult := linesOfType(lines, "run_result")
			require.Len(t, runResult, 1)
			assert.Equal(t, map[string]any{"done": true}, runResult[0]["result"])

			args = append(append(append([]string{}, base...), c.args...), "--quiet", "#tool one", "#tool two")
			stdout, stderr, code = runIn(t, dir, args...)
			require.Equal(t, 0, code, stderr)
			want := "{\"done\":true}\n"
			if c.firstAsks {
				want += want
			}
			assert.Equal(t, want, stdout)
		})
	}
}

// TestRunOutputSchemaTurnsFollowUps: with --output-retries 1 and replies
// without a result, each sends a follow-up after both turns and reports
// result_missing on both; last only after the last turn, which alone is
// result_missing. Both exit 5.
func TestRunOutputSchemaTurnsFollowUps(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		turns    string
		prompts  int // turns the caller asked for (session_started)
		follows  int // follow-ups (result_follow_up)
		missings int
	}{
		{turns: "each", prompts: 2, follows: 2, missings: 2},
		{turns: "last", prompts: 2, follows: 1, missings: 1},
	} {
		t.Run(c.turns, func(t *testing.T) {
			t.Parallel()
			stdout, stderr, code := runIn(t, t.TempDir(), "run", "--json", "--command", agentWith(t, turnsScript),
				"--output-schema", writeSchema(t, cliSchema), "--output-retries", "1", "--output-schema-turns", c.turns,
				"#prose one", "#prose two")
			require.Equal(t, 5, code, stderr)
			lines := jsonLines(t, stdout)
			assert.Len(t, linesOfType(lines, "session_started"), c.prompts)
			assert.Len(t, linesOfType(lines, "result_follow_up"), c.follows)
			turns := linesOfType(lines, "turn_result")
			require.Len(t, turns, 2)
			assert.Equal(t, c.missings == 2, turns[0]["result_missing"] != nil, "first turn: %v", turns[0])
			assert.Equal(t, "the reply holds no JSON object", turns[1]["result_missing"])
		})
	}
}

// TestRunOutputSchemaTurnsInvalid: a value other than each and last is
// refused as bad usage (exit 2), on the command line and in WORKFLOW.md,
// and by validate with its check name.
func TestRunOutputSchemaTurnsInvalid(t *testing.T) {
	t.Parallel()
	_, stderr, code := runIn(t, t.TempDir(), "run", "--output-schema-turns", "all", "hi")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `agent.output_schema_turns "all" is neither each nor last`)

	dir := t.TempDir()
	wf := "---\nagent:\n  kind: agent-client-protocol\n  command: x\n  output_schema_turns: first\n---\n"
	require.NoError(t, os.WriteFile(dir+"/WORKFLOW.md", []byte(wf), 0o600))
	stdout, _, code := runIn(t, dir, "validate", dir+"/WORKFLOW.md")
	assert.Equal(t, 1, code)
	assert.Equal(t, "error agent.output_schema_turns.invalid: agent.output_schema_turns \"first\" is neither each nor last\n", stdout)
	_, stderr, code = runIn(t, dir, "run", "--workflow", dir+"/WORKFLOW.md", "hi")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `agent.output_schema_turns "first" is neither each nor last`)
}
