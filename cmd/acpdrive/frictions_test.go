package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
)

// The frictions a new user met (issue 41, section 3), each through the
// binary.

// TestFrictionConfigMistakesExitTwo: a mistake in what the person typed
// (a malformed or missing --output-schema, a missing --workspace, a task's
// bad settings) is a configuration error: exit 2 with the reason
// configuration_invalid, never exit 3 (docs/behaviour.md#cli).
func TestFrictionConfigMistakesExitTwo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	malformed := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(malformed, []byte(`{not json`), 0o600))
	for _, args := range [][]string{
		{"--output-schema", malformed},
		{"--output-schema", filepath.Join(dir, "missing.json")},
		{"--workspace", filepath.Join(dir, "nowhere")},
	} {
		out, stderr, code := runIn(t, dir, append(append([]string{"run", "--json"}, args...), "hi")...)
		assert.Equal(t, 2, code, "%v: %s", args, stderr)
		assert.Len(t, ofType(parseLines(t, out), "startup_failed"), 1, "%v: %s", args, stderr)
		assert.Contains(t, out, `"reason":"configuration_invalid"`, args)

		_, stderr, code = runIn(t, dir, append(append([]string{"run"}, args...), "hi")...)
		assert.Equal(t, 2, code, args)
		assert.Contains(t, stderr, "the configuration is invalid", args)
	}

	tasks := writeTasks(t, dir, `{"id":"ok","prompt":"alpha"}`,
		`{"id":"bad","prompt":"beta","settings":{"stop_grace_ms":"soon"}}`)
	stdout, stderr, code := runIn(t, dir, "batch", "--json", tasks)
	assert.Equal(t, 2, code, stderr)
	got := taskLines(t, stdout, 2)
	assert.True(t, got["ok"].Completed)
	assert.Equal(t, "configuration_invalid", got["bad"].Reason)
}

// TestFrictionPermissionRefusalNamesWhy: a refusal under a preset or a
// rule says what decided it, not "this run is unattended"; a rule that
// sends a request to a person says so, not "offered no option to refuse"
// (docs/behaviour.md#permission-decisions).
func TestFrictionPermissionRefusalNamesWhy(t *testing.T) {
	t.Parallel()
	stdout, stderr, code := runIn(t, t.TempDir(), "run", "--json", "--permissions", "edit", "--command", agentWith(t, permissionScript), "go")
	require.Equal(t, 0, code, stderr)
	assert.NotContains(t, stdout, "because this run is unattended")
	assert.Contains(t, stdout, "outside the workspace")
	assert.Contains(t, stdout, "preset edit allows")

	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.txt")
	require.NoError(t, os.WriteFile(rules, []byte("allow kind=edit path=inside\nperson kind=execute\nrefuse\n"), 0o644))
	lines, stderr, _ := run(t, "run", "--json", "--permissions", "rules:"+rules, "--command", agentWith(t, permissionScript), "go")
	results := ofType(lines, "turn_result")
	require.Len(t, results, 1, stderr)
	assert.Equal(t, "turn_input_required", results[0].Outcome)
	assert.NotContains(t, results[0].Message, "offered no option to refuse")
	assert.Contains(t, results[0].Message, rules+":2")
	var refusals []string
	for _, l := range ofType(lines, "notification") {
		if strings.Contains(l.Message, "refused a permission request") {
			refusals = append(refusals, l.Message)
		}
	}
	require.NotEmpty(t, refusals)
	assert.Contains(t, refusals[0], rules+":3")
}

// TestFrictionOutputRetriesVisible: each --output-retries follow-up is a
// result_follow_up line under --json and a line on a terminal, and opens
// no session_started of its own (docs/behaviour.md#structured-results).
func TestFrictionOutputRetriesVisible(t *testing.T) {
	t.Parallel()
	stdout, stderr, code := runIn(t, t.TempDir(), "run", "--json", "--command", agentWith(t, resultScript),
		"--output-schema", writeSchema(t, cliSchema), "--output-retries", "2", "#prose go")
	require.Equal(t, 5, code, stderr)
	lines := jsonLines(t, stdout)
	assert.Len(t, linesOfType(lines, "session_started"), 1)
	follow := linesOfType(lines, "result_follow_up")
	require.Len(t, follow, 2, stdout)
	assert.Contains(t, follow[0]["message"], "follow-up 1 of 2")
	assert.Contains(t, follow[0]["message"], "the reply holds no JSON object")

	stdout, stderr, code = runIn(t, t.TempDir(), "run", "--command", agentWith(t, resultScript),
		"--output-schema", writeSchema(t, cliSchema), "--output-retries", "1", "#prose go")
	require.Equal(t, 5, code, stderr)
	assert.Contains(t, stdout, "follow-up 1 of 1")
}

// TestFrictionSteerNotOffered: --steer-stdin on a runtime that does not
// offer steering warns at start; a line is refused with its reason,
// under --json as a JSON line, never as agent_not_found
// (docs/behaviour.md#steering).
func TestFrictionSteerNotOffered(t *testing.T) {
	t.Parallel()
	_, stderr, code := runIn(t, t.TempDir(), "run", "--steer-stdin", "hi")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "--steer-stdin: the runtime does not offer steering")

	bin := testbin.Path(t)
	cmd := exec.Command(bin, "run", "--json", "--steer-stdin", "--turn-timeout", "1m", "#wait-cancel")
	cmd.Dir = t.TempDir()
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var errBuf bytes.Buffer
	cmd.Stderr = &errBuf
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(stdout)
	var raw []string
	var refused map[string]any
	sent := false
	for sc.Scan() {
		raw = append(raw, sc.Text())
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), sc.Text())
		switch {
		case m["type"] == "session_started" && !sent:
			_, err := stdin.Write([]byte("stop now\n"))
			require.NoError(t, err)
			sent = true
		case m["type"] == "steer_refused" && refused == nil:
			refused = m
			require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
		}
	}
	_ = stdin.Close()
	_ = cmd.Wait()
	require.NotNil(t, refused, strings.Join(raw, "\n"))
	assert.Equal(t, "not_offered", refused["reason"])
	assert.NotContains(t, refused["message"], "agent_not_found")
	assert.Contains(t, strings.Join(raw, "\n"), `"type":"warning"`)
	assert.NotContains(t, errBuf.String(), "agent_not_found")
}

// TestFrictionOutputSchemaOnReferenceAgent: the reference agent's
// result-tool scenario reports through acpdrive's result tool, so
// --output-schema works on the built-in agent (docs/reference-agent.md).
func TestFrictionOutputSchemaOnReferenceAgent(t *testing.T) {
	t.Parallel()
	schema := writeSchema(t, `{"type":"object","properties":{"done":{"type":"boolean"},"summary":{"type":"string","minLength":2},
 "files":{"type":"array","items":{"type":"string"},"minItems":1},"count":{"type":"integer","minimum":3},"level":{"enum":["low","high"]}},
 "required":["done","summary","files","count","level"]}`)
	bin := testbin.Path(t)
	stdout, stderr, code := runIn(t, t.TempDir(), "run", "--json", "--command", bin+" agent --scenario result-tool", "--output-schema", schema, "do the work")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, `"result_source":"tool"`)
}

// TestFrictionFailedTurnOnStderr: in human output a turn that did not
// complete is also one line on standard error (docs/behaviour.md#cli).
func TestFrictionFailedTurnOnStderr(t *testing.T) {
	t.Parallel()
	_, stderr, code := runIn(t, t.TempDir(), "run", "#prompt-error")
	require.Equal(t, 1, code)
	assert.Contains(t, stderr, "acpdrive: turn 1: turn_failed")
}

// TestFrictionDashReadsStdin: a lone "-" prompt reads the prompt from
// standard input, as -f - does (docs/behaviour.md#cli).
func TestFrictionDashReadsStdin(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(testbin.Path(t), "run", "--json", "-")
	cmd.Dir = t.TempDir()
	cmd.Stdin = strings.NewReader("hello from stdin\n")
	out, err := cmd.Output()
	require.NoError(t, err)
	lines := jsonLines(t, string(out))
	turns := linesOfType(lines, "turn_result")
	require.Len(t, turns, 1)
	assert.Equal(t, "hello from stdin", strings.TrimSpace(turns[0]["reply"].(string)))
}

// TestFrictionBatchInterrupt: a SIGINT is acknowledged on standard error;
// a task that never started is "not started", not failed; the batch ends
// with a summary line (docs/behaviour.md#batch).
func TestFrictionBatchInterrupt(t *testing.T) {
	for _, jsonOut := range []bool{true, false} {
		dir := t.TempDir()
		tasks := writeTasks(t, dir, `{"id":"a","prompt":"#wait-cancel"}`, `{"id":"b","prompt":"never sent"}`)
		args := []string{"batch", "--parallel", "1", "--log-level", "info", "--command", testbin.Path(t) + " agent --scenario multi-session", tasks}
		if jsonOut {
			args = append([]string{"batch", "--json"}, args[1:]...)
		}
		cmd := exec.Command(testbin.Path(t), args...)
		cmd.Dir = dir
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		stderr, err := cmd.StderrPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		sc := bufio.NewScanner(stderr)
		var errText strings.Builder
		for sc.Scan() {
			errText.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), `msg="agent session created"`) {
				require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
			}
		}
		_ = cmd.Wait()
		assert.Contains(t, errText.String(), "acpdrive batch: interrupt: cancelling", "json %v", jsonOut)
		if jsonOut {
			var summary map[string]any
			for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
				var m map[string]any
				require.NoError(t, json.Unmarshal([]byte(l), &m), l)
				if m["type"] == "batch_result" {
					summary = m
				}
				if m["id"] == "b" {
					assert.Equal(t, true, m["not_started"], l)
				}
			}
			require.NotNil(t, summary, stdout.String())
			assert.Equal(t, float64(1), summary["cancelled"])
			assert.Equal(t, float64(1), summary["not_started"])
			continue
		}
		out := stdout.String()
		assert.Contains(t, out, "task b: not started")
		assert.NotContains(t, out, "task b: failed")
		assert.Contains(t, out, "batch: 2 tasks: "+strconv.Itoa(0)+" completed, 0 failed, 1 cancelled, 1 not started")
	}
}

// TestFrictionCompletionValues: completion offers the values of
// --permissions, --sandbox-net and --mode, and the flags and scenarios of
// acpdrive agent.
func TestFrictionCompletionValues(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	script, _, code := runIn(t, t.TempDir(), "completion", "bash")
	require.Equal(t, 0, code)
	complete := func(words ...string) string {
		src := script + "\nCOMP_WORDS=(" + strings.Join(quoteAll(words), " ") + ")\nCOMP_CWORD=" + strconv.Itoa(len(words)-1) + "\n_acpdrive\necho \"${COMPREPLY[*]}\"\n"
		out, err := exec.Command("bash", "-c", src).CombinedOutput()
		require.NoError(t, err, string(out))
		return strings.TrimSpace(string(out))
	}
	assert.Equal(t, "refuse read edit rules:", complete("acpdrive", "run", "--permissions", ""))
	assert.Equal(t, "host none", complete("acpdrive", "run", "--sandbox-net", ""))
	assert.Contains(t, complete("acpdrive", "run", "--mode", ""), "plan")
	assert.Equal(t, "--scenario --script", complete("acpdrive", "agent", "--sc"))
	assert.Contains(t, complete("acpdrive", "agent", "--scenario", "ec"), "echo")
	assert.Equal(t, "1 2 auto", complete("acpdrive", "agent", "--protocol", ""))
	for _, shell := range []string{"zsh", "fish"} {
		out, _, code := runIn(t, t.TempDir(), "completion", shell)
		require.Equal(t, 0, code, shell)
		assert.Contains(t, out, "refuse read edit rules:", shell)
		assert.Contains(t, out, "list-scenarios", shell)
	}
}
