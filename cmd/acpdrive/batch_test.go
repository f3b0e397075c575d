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

// taskLine is a batch --json line as a consumer reads it.
type taskLine struct {
	Type        string `json:"type"`
	ID          string `json:"id"`
	SessionID   string `json:"session_id"`
	AgentPID    int    `json:"agent_pid"`
	Host        string `json:"host"`
	Completed   bool   `json:"completed"`
	TurnResults []struct {
		Turn          int             `json:"turn"`
		Outcome       string          `json:"outcome"`
		ErrorKind     string          `json:"error_kind"`
		Reply         string          `json:"reply"`
		RuntimeExit   string          `json:"runtime_exit"`
		Result        json.RawMessage `json:"result"`
		ResultMissing string          `json:"result_missing"`
	} `json:"turn_results"`
	Usage *struct {
		TotalTokens int64 `json:"total_tokens"`
	} `json:"usage"`
	MeasuredTurns int `json:"measured_turns"`
	Cost          []struct {
		Amount   float64 `json:"amount"`
		Currency string  `json:"currency"`
	} `json:"cost"`
	Result        json.RawMessage `json:"result"`
	ResultMissing string          `json:"result_missing"`
	Stopped       string          `json:"stopped"`
	ErrorKind     string          `json:"error_kind"`
	Reason        string          `json:"reason"`
	Message       string          `json:"message"`
}

// writeTasks writes a TASKS.jsonl of the given lines into dir.
func writeTasks(t *testing.T, dir string, lines ...string) string {
	t.Helper()
	path := filepath.Join(dir, "tasks.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	return path
}

// taskLines reads batch --json's stdout: one line per task, by id.
func taskLines(t *testing.T, stdout string, want int) map[string]taskLine {
	t.Helper()
	got := map[string]taskLine{}
	for _, text := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if strings.HasPrefix(text, `{"type":"batch_result"`) {
			continue // the closing summary
		}
		var l taskLine
		require.NoError(t, json.Unmarshal([]byte(text), &l), text)
		require.Equal(t, "task_result", l.Type, text)
		_, dup := got[l.ID]
		require.False(t, dup, "one line per task: %s", text)
		got[l.ID] = l
	}
	require.Len(t, got, want, stdout)
	return got
}

// usagePrompt makes the reference agent report usage and a cost in its
// prompt result ("#usage-wire" with an argument).
const usagePrompt = `#usage-wire {\"usage\":{\"inputTokens\":10,\"outputTokens\":5,\"totalTokens\":15},\"cost\":{\"amount\":0.25,\"currency\":\"USD\"}}`

// TestBatchSharesOneProcess: acpdrive batch runs every task of a
// TASKS.jsonl, its sessions on one shared runtime process (kept warm, so
// even a task that starts after another ended shares it), and prints one
// JSON line per task with its turns, usage and cost; a failed task does
// not stop the others and makes the exit status 1
// (docs/behaviour.md#batch).
func TestBatchSharesOneProcess(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tasks := writeTasks(t, dir,
		`{"id":"a","prompt":"alpha"}`,
		`{"id":"b","prompts":["beta one","`+usagePrompt+`"]}`,
		`{"id":"c","prompt":"#prompt-error"}`,
		`{"id":"d","prompt":"delta"}`)
	cmd := testbin.Path(t) + " agent --scenario multi-session"
	stdout, stderr, code := runIn(t, dir, "batch", "--json", "--parallel", "4", "--sessions-per-process", "4",
		"--keep-warm", "1h", "--command", cmd, tasks)
	assert.Equal(t, 1, code, stderr)
	got := taskLines(t, stdout, 4)
	pids, ids := map[int]bool{}, map[string]bool{}
	for _, l := range got {
		pids[l.AgentPID] = true
		ids[l.SessionID] = true
		assert.Empty(t, l.Host, "a local task names no host")
	}
	assert.Len(t, pids, 1, "one shared process")
	assert.Len(t, ids, 4, "a session each, on the one process")
	assert.True(t, got["a"].Completed)
	assert.Equal(t, "alpha", got["a"].TurnResults[0].Reply)
	assert.Nil(t, got["a"].Usage, "not measured: no usage")
	require.Len(t, got["b"].TurnResults, 2)
	assert.Equal(t, "beta one", got["b"].TurnResults[0].Reply)
	require.NotNil(t, got["b"].Usage, "the prompt result's usage, on a shared process")
	assert.Equal(t, int64(15), got["b"].Usage.TotalTokens)
	assert.Equal(t, 1, got["b"].MeasuredTurns)
	require.Len(t, got["b"].Cost, 1)
	assert.Equal(t, 0.25, got["b"].Cost[0].Amount)
	assert.Equal(t, "USD", got["b"].Cost[0].Currency)
	assert.False(t, got["c"].Completed)
	assert.Equal(t, "response_error", got["c"].ErrorKind)
	assert.True(t, got["d"].Completed)

	// Without --json: one line of text per task (stdout is no terminal),
	// then the summary.
	stdout, _, code = runIn(t, dir, "batch", "--sessions-per-process", "4", "--command", cmd, tasks)
	assert.Equal(t, 1, code)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	assert.Len(t, lines, 5, stdout)
	assert.Equal(t, "batch: 4 tasks: 3 completed, 1 failed, 0 cancelled, 0 not started", lines[4])
	assert.Regexp(t, `(?m)^task a: completed \(1 turn, session ref-[0-9]+\)$`, stdout)
	assert.Contains(t, stdout, "; tokens: 15; cost 0.2500 USD)")
	assert.Contains(t, stdout, "task c: failed: session/prompt error -32603")
	assert.NotContains(t, stdout, "\x1b[", "no table into a pipe")
}

// TestBatchTaskSettings: a task's "settings" (the WORKFLOW.md agent keys)
// override the flags for that task alone; a task whose settings change the
// runtime's command runs on a process of its own; invalid settings fail
// that task alone with the configuration error; a task whose runtime
// crashes fails with its exit; the others complete (docs/behaviour.md#batch).
func TestBatchTaskSettings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := testbin.Path(t)
	shared := bin + " agent --scenario multi-session"
	other := bin + " agent --protocol 1 --scenario multi-session" // the same agent, another command line
	crash := bin + " agent --scenario crash"
	log := filepath.Join(dir, "retried.log")
	logged := bin + " agent --scenario multi-session --log " + log
	tasks := writeTasks(t, dir,
		`{"id":"a","prompt":"alpha"}`,
		`{"id":"b","prompt":"beta"}`,
		`{"id":"other","prompt":"gamma","settings":{"command":"`+other+`"}}`,
		`{"id":"bounded","prompt":"#wait-cancel","settings":{"turn_timeout_ms":300}}`,
		`{"id":"invalid","prompt":"delta","settings":{"permissions":"rules:missing.txt","stop_grace_ms":"soon"}}`,
		`{"id":"crash","prompt":"epsilon","settings":{"command":"`+crash+`"}}`,
		`{"id":"typo","prompt":"zeta","settings":{"colour":"blue"}}`,
		`{"id":"retried","prompt":"#prompt-error","settings":{"command":"`+logged+`","max_retries":1,"max_retry_backoff_ms":1}}`,
		`{"id":"ceiling","prompts":["`+usagePrompt+`","never sent"],"settings":{"max_tokens":10}}`)
	stdout, stderr, code := runIn(t, dir, "batch", "--json", "--parallel", "3", "--sessions-per-process", "4",
		"--keep-warm", "1h", "--command", shared, tasks)
	assert.Equal(t, 2, code, "a task's invalid settings are a configuration error: %s", stderr)
	got := taskLines(t, stdout, 9)

	for _, id := range []string{"a", "b", "other", "typo"} {
		assert.True(t, got[id].Completed, "%s: %+v", id, got[id])
	}
	assert.Equal(t, got["a"].AgentPID, got["b"].AgentPID, "the flags' command: one shared process")
	assert.Equal(t, got["a"].AgentPID, got["typo"].AgentPID)
	assert.NotEqual(t, got["a"].AgentPID, got["other"].AgentPID, "another command: another process")
	assert.Equal(t, "gamma", got["other"].TurnResults[0].Reply)

	b := got["bounded"]
	assert.False(t, b.Completed)
	assert.Equal(t, "turn_timeout", b.ErrorKind, "the task's turn_timeout_ms bounds its turn")
	assert.Equal(t, got["a"].AgentPID, b.AgentPID, "a bound is the session's: the same shared process")

	inv := got["invalid"]
	assert.False(t, inv.Completed)
	assert.Equal(t, "agent_not_found", inv.ErrorKind)
	assert.Equal(t, "configuration_invalid", inv.Reason)
	assert.Contains(t, inv.Message, "settings: agent.permissions: the rules file cannot be read: ")
	assert.Contains(t, inv.Message, filepath.Join(dir, "missing.txt"), "a relative path resolves against the tasks file's directory")
	assert.Contains(t, inv.Message, "; agent.stop_grace_ms: expected an integer, found a string")
	assert.Empty(t, inv.SessionID, "no session was started")
	assert.Empty(t, inv.TurnResults)

	c := got["crash"]
	assert.False(t, c.Completed)
	assert.Equal(t, "port_exit", c.ErrorKind)
	require.Len(t, c.TurnResults, 1)
	assert.Contains(t, c.TurnResults[0].RuntimeExit, "exit status 3: fatal: reference agent crashed on purpose")
	assert.NotEqual(t, got["a"].AgentPID, c.AgentPID)

	r := got["retried"]
	assert.False(t, r.Completed)
	assert.Equal(t, "response_error", r.ErrorKind)
	assert.Equal(t, 2, promptsLogged(t, log), "max_retries 1: the prompt was sent twice")

	ceil := got["ceiling"]
	assert.False(t, ceil.Completed)
	assert.Len(t, ceil.TurnResults, 1, "max_tokens stopped the task before its second prompt")
	assert.Equal(t, "the run reached its token ceiling (agent.max_tokens); no further prompt was sent", ceil.Stopped)
	assert.Equal(t, ceil.Stopped, ceil.Message)

	assert.Contains(t, stderr, "acpdrive batch: task typo: warning config.unknown_key: agent.colour: the agent block has no such key; it is ignored\n")
	assert.Equal(t, 1, strings.Count(stderr, "does not advertise session/close: its tasks run on a process each"), stderr)
}

// resultCloseScript is resultScript on a runtime that advertises
// session/close, so its sessions share a process.
const resultCloseScript = `{"initialize":{"agentCapabilities":{"loadSession":false,"sessionCapabilities":{"close":{}}}},"turns":{
 "result":{"steps":[{"step":"text","text":"Done.\n` + "```json" + `\n{\"done\": true}\n` + "```" + `\n"},{"step":"stop","stopReason":"end_turn"}]},
 "prose":{"steps":[{"step":"text","text":"I did it."},{"step":"stop","stopReason":"end_turn"}]}}}`

// TestBatchExitStatus: 0 when every task completed; 5 when every task
// completed but one under --output-schema has no valid result; each line
// carries its task's result (docs/behaviour.md#batch).
func TestBatchExitStatus(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := agentWith(t, resultCloseScript)
	schema := writeSchema(t, cliSchema)
	tasks := writeTasks(t, dir, `{"id":"a","prompt":"#result go"}`, `{"id":"b","prompts":["#result one","#result two"]}`)
	stdout, stderr, code := runIn(t, dir, "batch", "--json", "--sessions-per-process", "2", "--command", cmd, "--output-schema", schema, tasks)
	require.Equal(t, 0, code, stderr)
	got := taskLines(t, stdout, 2)
	for _, id := range []string{"a", "b"} {
		assert.True(t, got[id].Completed, id)
		assert.JSONEq(t, `{"done":true}`, string(got[id].Result), id)
	}
	assert.JSONEq(t, `{"done":true}`, string(got["b"].TurnResults[1].Result))
	assert.Empty(t, got["a"].ResultMissing)

	tasks = writeTasks(t, dir, `{"id":"a","prompt":"#result go"}`, `{"id":"b","prompt":"#prose x"}`)
	stdout, stderr, code = runIn(t, dir, "batch", "--json", "--command", cmd, "--output-schema", schema, tasks)
	require.Equal(t, 5, code, stderr)
	got = taskLines(t, stdout, 2)
	assert.True(t, got["b"].Completed)
	assert.Equal(t, "the reply holds no JSON object", got["b"].ResultMissing)
	assert.Nil(t, got["b"].Result)
	assert.JSONEq(t, `{"done":true}`, string(got["a"].Result))

	// Under agent.output_schema_turns last, only a task's last prompt asks:
	// an earlier prose turn is no result_missing and the batch exits 0.
	tasks = writeTasks(t, dir, `{"id":"c","prompts":["#prose x","#result y"]}`)
	stdout, stderr, code = runIn(t, dir, "batch", "--json", "--command", cmd, "--output-schema", schema, "--output-schema-turns", "last", tasks)
	require.Equal(t, 0, code, stderr)
	got = taskLines(t, stdout, 1)
	require.Len(t, got["c"].TurnResults, 2)
	assert.Empty(t, got["c"].TurnResults[0].ResultMissing)
	assert.Nil(t, got["c"].TurnResults[0].Result)
	assert.JSONEq(t, `{"done":true}`, string(got["c"].TurnResults[1].Result))
	assert.JSONEq(t, `{"done":true}`, string(got["c"].Result))
	assert.Empty(t, got["c"].ResultMissing)
}

// TestBatchUsage: what batch refuses before any task starts (exit 2).
func TestBatchUsage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		lines []string
		args  []string
		want  string
	}{
		{[]string{`{"id":"a","prompt":"x"}`, `{"id":"a","prompt":"y"}`}, nil, `tasks.jsonl:2: the task id "a" is already the id of line 1`},
		{[]string{`{"id":"a"}`}, nil, `tasks.jsonl:1: a task needs an "id" and a "prompt" or "prompts"`},
		{[]string{`{"id":"a","prompt":"x"}`}, []string{"--parallel", "0"}, "--parallel and --sessions-per-process want 1 or more"},
		{[]string{`{"id":"a","prompt":"x"}`}, []string{"--keep-warm", "-1s"}, "--keep-warm: want a duration of 0 or more"},
	} {
		tasks := writeTasks(t, dir, tc.lines...)
		_, stderr, code := runIn(t, dir, append(append([]string{"batch"}, tc.args...), tasks)...)
		assert.Equal(t, 2, code, stderr)
		assert.Contains(t, stderr, tc.want)
	}
}

// promptsLogged counts the session/prompt requests a reference agent's
// --log file holds.
func promptsLogged(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	n := 0
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var rec struct {
			Kind, Method string
		}
		require.NoError(t, json.Unmarshal([]byte(l), &rec), l)
		if rec.Kind == "request" && rec.Method == "session/prompt" {
			n++
		}
	}
	return n
}

// TestBatchSiblingsSurviveASharedProcessCrash: six tasks share one
// process and one task's turn crashes it; the five others run again on
// processes of their own and complete, each saying that its session was
// replaced fresh; only the crasher reports the crash
// (docs/behaviour.md#fleet).
func TestBatchSiblingsSurviveASharedProcessCrash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var lines []string
	for _, id := range []string{"t1", "t2", "t3", "t4", "t6"} {
		lines = append(lines, `{"id":"`+id+`","prompts":["one","#slow-accept 1500","three"]}`)
	}
	lines = append(lines, `{"id":"t5","prompts":["one","#slow-accept 300","#crash"]}`)
	tasks := writeTasks(t, dir, lines...)
	cmd := testbin.Path(t) + " agent --scenario multi-session"
	stdout, stderr, code := runIn(t, dir, "batch", "--json", "--parallel", "6", "--sessions-per-process", "6",
		"--command", cmd, tasks)
	assert.Equal(t, 1, code, stderr)
	got := taskLines(t, stdout, 6)
	for id, l := range got {
		if id == "t5" {
			continue
		}
		assert.True(t, l.Completed, "%s: %s", id, l.Message)
		assert.NotContains(t, l.Message, "crashed on purpose", id)
	}
	crasher := got["t5"]
	assert.False(t, crasher.Completed)
	assert.Equal(t, "port_exit", crasher.ErrorKind)
	assert.Contains(t, crasher.Message, "crashed on purpose")
	var replaced struct {
		Replacements []struct {
			Resumed  bool `json:"resumed"`
			Isolated bool `json:"isolated"`
		} `json:"replacements"`
	}
	for _, text := range strings.Split(stdout, "\n") {
		if strings.Contains(text, `"id":"t5"`) {
			require.NoError(t, json.Unmarshal([]byte(text), &replaced))
		}
	}
	require.Len(t, replaced.Replacements, 1, "the crasher ran its turn once more, alone")
	assert.True(t, replaced.Replacements[0].Isolated)
	assert.False(t, replaced.Replacements[0].Resumed, "the reference agent cannot resume: fresh")
	assert.Contains(t, stderr, "task t5: fresh: the session could not be resumed", "said on a terminal too")
}
