package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
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
// refused at start (exit 3, agent_not_found), and by validate.
func TestRunOutputSchemaRefused(t *testing.T) {
	t.Parallel()
	schema := writeSchema(t, `{"type":"array"}`)
	stdout, _, code := runIn(t, t.TempDir(), "run", "--json", "--output-schema", schema, "hi")
	require.Equal(t, 3, code)
	assert.Contains(t, stdout, `"error_kind":"agent_not_found"`)
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
