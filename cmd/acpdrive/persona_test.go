package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
	"github.com/acpdrive/acpdrive/refagent"
)

// The tests of this file retry, through the binary, what a person typing
// at the CLI met (each names the finding it proves fixed).

// lastObject is the last JSON line of stdout, decoded loosely.
func lastObject(t *testing.T, stdout string) map[string]any {
	t.Helper()
	var last map[string]any
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "{") {
			last = nil
			require.NoError(t, json.Unmarshal(sc.Bytes(), &last), sc.Text())
		}
	}
	require.NotNil(t, last, "no JSON line in %q", stdout)
	return last
}

// TestResumeThatFallsBackSaysSo: a --resume the runtime cannot honour
// tells the person, at once and in run_result, that the run did not
// continue, why, and that it started afresh.
func TestResumeThatFallsBackSaysSo(t *testing.T) {
	bin := testbin.Path(t)
	cases := []struct{ scenario, reason string }{
		{"load-error", "session/load failed: session/load error -32603: No previous sessions found for this project."},
		{"resume-error", "session/resume failed: session/resume error -32002: Resource not found"},
		{"echo", "the runtime advertises neither session/load nor session/resume"},
	}
	for _, c := range cases {
		t.Run(c.scenario, func(t *testing.T) {
			command := bin + " agent --scenario " + c.scenario
			stdout, stderr, code := runIn(t, t.TempDir(), "run", "--command", command, "--resume", "saved-7", "hi")
			require.Equal(t, 0, code, stderr)
			assert.Contains(t, stdout, "· did not continue session saved-7: "+c.reason+"; started a new session ref-1 instead\n")
			assert.Contains(t, stdout, "; saved-7 not continued, started afresh")

			stdout, stderr, code = runIn(t, t.TempDir(), "run", "--json", "--command", command, "--resume", "saved-7", "hi")
			require.Equal(t, 0, code, stderr)
			last := lastObject(t, stdout)
			assert.Equal(t, "ref-1", last["session_id"])
			resume, _ := last["resume"].(map[string]any)
			require.NotNil(t, resume, "run_result carries resume: %v", last)
			assert.Equal(t, "saved-7", resume["requested"])
			assert.Equal(t, false, resume["continued"])
			assert.Equal(t, c.reason, resume["reason"])
		})
	}
	stdout, stderr, code := runIn(t, t.TempDir(), "run", "--json", "--command", bin+" agent --scenario resume", "--resume", "saved-7", "hi")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, map[string]any{"requested": "saved-7", "continued": true, "route": "session/resume"}, lastObject(t, stdout)["resume"])
}

// TestCrashMidTurnShowsExitAndStderr: a runtime that exits mid-turn is
// reported with its exit status and the tail of its standard error, as a
// start-up failure is, without --log-level.
func TestCrashMidTurnShowsExitAndStderr(t *testing.T) {
	command := testbin.Path(t) + " agent --scenario crash"
	want := "exit status 3: fatal: reference agent crashed on purpose (scenario crash)"
	stdout, _, code := runIn(t, t.TempDir(), "run", "--command", command, "hi")
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "[port_exit, retryable=true]; the runtime exited: "+want+";")
	stdout, _, code = runIn(t, t.TempDir(), "run", "--json", "--command", command, "hi")
	assert.Equal(t, 1, code)
	var result map[string]any
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, `{"type":"turn_result"`) {
			require.NoError(t, json.Unmarshal([]byte(l), &result))
		}
	}
	require.NotNil(t, result)
	assert.Equal(t, want, result["runtime_exit"])
}

// TestStartupErrorGoesToStderr: a person's start-up error is on standard
// error (stdout stays empty); --json's startup_failed stays on stdout.
func TestStartupErrorGoesToStderr(t *testing.T) {
	for _, sub := range []string{"run", "probe"} {
		args := []string{sub, "--command", "acpdrive-no-such-runtime"}
		if sub == "run" {
			args = append(args, "hi")
		}
		stdout, stderr, code := runIn(t, t.TempDir(), args...)
		assert.Equal(t, 3, code, sub)
		assert.Empty(t, stdout, sub)
		assert.True(t, strings.HasPrefix(stderr, "session could not start: agent: agent_not_found: agent command \"acpdrive-no-such-runtime\" was not found on PATH"), "%s: %q", sub, stderr)
		assert.Equal(t, 1, strings.Count(stderr, "\n"), sub)
		stdout, stderr, code = runIn(t, t.TempDir(), append(args, "--json")...)
		assert.Equal(t, 3, code, sub)
		assert.Empty(t, stderr, sub)
		assert.Contains(t, stdout, `{"type":"startup_failed",`, sub)
	}
}

// TestInitTimeoutFlag: --init-timeout bounds initialize (no 60 s floor),
// and the message is one line naming the call, the bound and the flag.
func TestInitTimeoutFlag(t *testing.T) {
	command := testbin.Path(t) + " agent --scenario hang-init"
	for _, sub := range []string{"run", "probe"} {
		args := []string{sub, "--command", command, "--init-timeout", "300ms"}
		if sub == "run" {
			args = append(args, "hi")
		}
		stdout, stderr, code := runIn(t, t.TempDir(), args...)
		assert.Equal(t, 3, code, sub)
		assert.Empty(t, stdout, sub)
		assert.Equal(t, "session could not start: agent: response_timeout: the runtime did not answer initialize within 300ms (--init-timeout sets this bound)\n", stderr, sub)
	}
}

// interruptAfter runs the CLI, sends SIGINT once stdout shows want, and
// returns all of stdout and stderr.
func interruptAfter(t *testing.T, want string, args ...string) (string, string) {
	t.Helper()
	cmd := exec.Command(testbin.Path(t), args...)
	cmd.Dir = t.TempDir()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	r := bufio.NewReader(stdout)
	var seen bytes.Buffer
	for !strings.Contains(seen.String(), want) {
		b, err := r.ReadByte()
		require.NoError(t, err, "output ended before %q: %q", want, seen.String())
		seen.WriteByte(b)
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	rest, err := io.ReadAll(r)
	require.NoError(t, err)
	_ = cmd.Wait()
	return seen.String() + string(rest), stderr.String()
}

// TestInterruptSaysWhatHappens: the first SIGINT is answered at once on
// stderr; a runtime that never acknowledges the cancel is named in the
// ending, one that does is not.
func TestInterruptSaysWhatHappens(t *testing.T) {
	stdout, stderr := interruptAfter(t, "I will never answer.", "run", "--read-timeout", "1s", "#no-response")
	assert.Equal(t, "acpdrive: cancelling the turn (session/cancel sent, waiting for the runtime's answer); interrupt again to stop the session\n", stderr)
	assert.Contains(t, stdout, "── turn 1: turn_cancelled: turn cancelled [turn_cancelled, retryable=false]; the runtime never acknowledged the cancel (no answer within 1s);")

	stdout, stderr = interruptAfter(t, "Waiting for a cancel.", "run", "#wait-cancel")
	assert.Contains(t, stderr, "acpdrive: cancelling the turn")
	assert.Contains(t, stdout, "── turn 1: turn_cancelled")
	assert.NotContains(t, stdout, "never acknowledged")

	stdout, stderr = interruptAfter(t, `"type":"message_chunk"`, "run", "--json", "--read-timeout", "1s", "#no-response")
	assert.Empty(t, stderr, "--json writes nothing for a person")
	assert.Contains(t, stdout, `"outcome":"turn_cancelled","error_kind":"turn_cancelled","retryable":false,"message":"turn cancelled","reply":"I will never answer.","cancel_unanswered":true`)
}

// TestBadFlagIsOneLine: a bad flag value is one line on stderr naming the
// flag, what it takes and --help; no usage dump, no library's message.
func TestBadFlagIsOneLine(t *testing.T) {
	see := " (acpdrive run --help lists the flags)\n"
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--read-timeout", "soon"}, `acpdrive run: --read-timeout "soon": want a duration like 5s, 1m30s or 0`},
		{[]string{"--log-level", "loud"}, `acpdrive run: --log-level "loud": want debug, info, warn or error`},
		{[]string{"--max-tokens", "many"}, `acpdrive run: --max-tokens "many": want a whole number like 1000`},
		{[]string{"--json=maybe"}, `acpdrive run: --json "maybe": want true or false`},
		{[]string{"--frobnicate"}, `acpdrive run: unknown flag --frobnicate`},
	}
	for _, c := range cases {
		stdout, stderr, code := runIn(t, t.TempDir(), append([]string{"run"}, append(c.args, "hi")...)...)
		assert.Equal(t, 2, code, "%q", c.args)
		assert.Empty(t, stdout, "%q", c.args)
		assert.Equal(t, c.want+see, stderr, "%q", c.args)
	}
	stdout, stderr, code := runIn(t, t.TempDir(), "probe", "--read-timeout", "soon")
	assert.Equal(t, 2, code)
	assert.Empty(t, stdout)
	assert.Equal(t, "acpdrive probe: --read-timeout \"soon\": want a duration like 5s, 1m30s or 0 (acpdrive probe --help lists the flags)\n", stderr)
}

// TestNegativeFlagIsUsageError: every flag refuses a negative value the
// same way (exit 2, one line), before anything starts.
func TestNegativeFlagIsUsageError(t *testing.T) {
	see := " (acpdrive run --help lists the flags)\n"
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--max-tokens", "-1"}, "acpdrive run: --max-tokens -1: want a whole number of 0 or more (0: no ceiling)"},
		{[]string{"--turn-timeout", "-5s"}, "acpdrive run: --turn-timeout -5s: want a duration of 0 or more (0 disables it)"},
		{[]string{"--read-timeout", "-1s"}, "acpdrive run: --read-timeout -1s: want a duration of 0 or more (0 means 30s)"},
		{[]string{"--stall-timeout", "-1m"}, "acpdrive run: --stall-timeout -1m0s: want a duration of 0 or more (0 disables it)"},
		{[]string{"--init-timeout", "-1s"}, "acpdrive run: --init-timeout -1s: want a duration of 0 or more (0 keeps the default)"},
		{[]string{"--max-cost", "-1"}, "acpdrive run: --max-cost -1: want an amount of 0 or more (0: no ceiling)"},
		{[]string{"--stop-grace", "-1s"}, "acpdrive run: --stop-grace -1s: want a positive duration like 5s"},
	}
	for _, c := range cases {
		stdout, stderr, code := runIn(t, t.TempDir(), append([]string{"run"}, append(c.args, "hi")...)...)
		assert.Equal(t, 2, code, "%q", c.args)
		assert.Empty(t, stdout, "%q", c.args)
		assert.Equal(t, c.want+see, stderr, "%q", c.args)
	}
}

// TestRelativePathsResolvedAlike: --workspace . and a relative --add-dir
// are both taken against the current directory; an additional directory
// that does not exist is refused the way a missing workspace is.
func TestRelativePathsResolvedAlike(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	agentLog := filepath.Join(dir, "agent.log")
	agent := testbin.Path(t) + " agent --scenario session-config --log " + agentLog
	stdout, stderr, code := runIn(t, dir, "run", "--json", "--command", agent, "--workspace", ".", "--add-dir", "sub", "hi")
	require.Equal(t, 0, code, "stdout %s stderr %s", stdout, stderr)
	recs, err := refagent.ReadLog(agentLog)
	require.NoError(t, err)
	var params struct {
		Params struct {
			CWD                   string   `json:"cwd"`
			AdditionalDirectories []string `json:"additionalDirectories"`
		} `json:"params"`
	}
	for _, r := range recs {
		if r.Method == "session/new" {
			require.NoError(t, json.Unmarshal(r.Message, &params))
		}
	}
	real, err := filepath.EvalSymlinks(dir)
	require.NoError(t, err)
	for _, p := range append([]string{params.Params.CWD}, params.Params.AdditionalDirectories...) {
		assert.True(t, filepath.IsAbs(p), p)
	}
	assert.Contains(t, []string{dir, real}, params.Params.CWD)
	require.Len(t, params.Params.AdditionalDirectories, 1)
	assert.Contains(t, []string{filepath.Join(dir, "sub"), filepath.Join(real, "sub")}, params.Params.AdditionalDirectories[0])

	// A directory the person named that is not there is a configuration
	// error: exit 2 (docs/behaviour.md#cli).
	stdout, stderr, code = runIn(t, dir, "run", "--command", agent, "--add-dir", "missing", "hi")
	assert.Equal(t, 2, code)
	assert.Empty(t, stdout)
	assert.True(t, strings.HasPrefix(stderr, "session could not start: the configuration is invalid: agent: invalid_workspace_cwd: additional directory does not exist: "), stderr)
	stdout, stderr, code = runIn(t, dir, "run", "--command", agent, "--workspace", "missing", "hi")
	assert.Equal(t, 2, code)
	assert.Empty(t, stdout)
	assert.True(t, strings.HasPrefix(stderr, "session could not start: the configuration is invalid: agent: invalid_workspace_cwd: workspace path does not exist: "), stderr)
}

// TestRunWorkflowWarnsAsValidateDoes: run --workflow prints validate's
// warnings (a typo'd key), on stderr, and runs.
func TestRunWorkflowWarnsAsValidateDoes(t *testing.T) {
	dir := t.TempDir()
	wf := filepath.Join(dir, "WORKFLOW.md")
	require.NoError(t, os.WriteFile(wf, []byte("---\nagent:\n  kind: agent-client-protocol\n  command: "+testbin.Path(t)+" agent\n  turn_timout_ms: 5\n---\n"), 0o600))
	want := "warning config.unknown_key: agent.turn_timout_ms: the agent block has no such key; it is ignored (line 5)\n"
	validated, _, code := runIn(t, dir, "validate", wf)
	require.Equal(t, 0, code)
	require.Equal(t, want, validated)
	for _, jsonOut := range []bool{false, true} {
		args := []string{"run", "--workflow", wf, "hi"}
		if jsonOut {
			args = append(args, "--json")
		}
		stdout, stderr, code := runIn(t, dir, args...)
		assert.Equal(t, 0, code, stderr)
		assert.Equal(t, want, stderr)
		assert.Contains(t, stdout, "hi")
	}
}

// TestRunFlagsOverrideTheWorkflow: --command supplies what a WORKFLOW.md
// lacks; without it the file is refused as validate refuses it.
func TestRunFlagsOverrideTheWorkflow(t *testing.T) {
	dir := t.TempDir()
	wf := filepath.Join(dir, "nocmd.md")
	require.NoError(t, os.WriteFile(wf, []byte("---\nagent:\n  kind: agent-client-protocol\n  read_timeout_ms: 4000\n---\n"), 0o600))
	stdout, stderr, code := runIn(t, dir, "run", "--workflow", wf, "--command", testbin.Path(t)+" agent", "hi")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "── turn 1: turn_completed")
	_, stderr, code = runIn(t, dir, "run", "--workflow", wf, "hi")
	assert.Equal(t, 2, code)
	assert.Equal(t, "acpdrive run: agent.command is required for agent kind \"agent-client-protocol\"\n", stderr)
}

// TestStallMessageNamesWhatWasTyped: a turn past its bound names the flag
// the person typed (or the WORKFLOW.md key they wrote), with its value.
func TestStallMessageNamesWhatWasTyped(t *testing.T) {
	stdout, _, code := runIn(t, t.TempDir(), "run", "--read-timeout", "1s", "--stall-timeout", "300ms", "#no-response")
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "turn_failed: the agent produced no event within --stall-timeout 300ms [turn_timeout, retryable=true]")
	stdout, _, code = runIn(t, t.TempDir(), "run", "--read-timeout", "1s", "--turn-timeout", "300ms", "#no-response")
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "turn_failed: the turn exceeded --turn-timeout 300ms [turn_timeout, retryable=true]")

	dir := t.TempDir()
	wf := filepath.Join(dir, "WORKFLOW.md")
	require.NoError(t, os.WriteFile(wf, []byte("---\nagent:\n  kind: agent-client-protocol\n  command: "+testbin.Path(t)+" agent\n  read_timeout_ms: 1000\n  stall_timeout_ms: 300\n---\n"), 0o600))
	stdout, _, code = runIn(t, dir, "run", "--workflow", wf, "#no-response")
	assert.Equal(t, 1, code)
	assert.Contains(t, stdout, "turn_failed: the agent produced no event within agent.stall_timeout_ms (300ms) [turn_timeout, retryable=true]")
}

// TestPromptFromFileAndStdin: -f FILE gives one prompt per file, - reads
// standard input, before the PROMPT arguments.
func TestPromptFromFileAndStdin(t *testing.T) {
	dir := t.TempDir()
	long := "a prompt from a file,\non two lines"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p.txt"), []byte(long), 0o600))
	cmd := exec.Command(testbin.Path(t), "run", "--json", "-f", "p.txt", "-f", "-", "third")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader("from stdin")
	out, err := cmd.Output()
	require.NoError(t, err)
	var replies []string
	for _, l := range parseLines(t, string(out)) {
		if l.Type == "notification" && !strings.HasPrefix(l.Message, "this session started") {
			replies = append(replies, l.Message)
		}
	}
	assert.Equal(t, []string{long, "from stdin", "third"}, replies)

	_, stderr, code := runIn(t, dir, "run", "-f", "missing.txt")
	assert.Equal(t, 2, code)
	assert.Equal(t, "acpdrive run: -f missing.txt: open missing.txt: no such file or directory\n", stderr)
}

// TestQuietPrintsOnlyTheReply: --quiet (-q) prints the reply and nothing
// else, so it pipes; a turn that does not complete is one line on stderr.
func TestQuietPrintsOnlyTheReply(t *testing.T) {
	cmd := exec.Command(testbin.Path(t), "run", "-q", "-f", "-", "#tools")
	cmd.Dir = t.TempDir()
	cmd.Stdin = strings.NewReader(`{"answer":42}`)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	assert.Equal(t, "{\"answer\":42}\n", string(out))
	assert.Empty(t, stderr.String())

	stdout, errOut, code := runIn(t, t.TempDir(), "run", "--quiet", "#stop-refusal", "never sent")
	assert.Equal(t, 4, code)
	assert.Equal(t, "Stopping with refusal.\n", stdout)
	assert.Equal(t, "acpdrive: turn 1: turn_failed (stop reason refusal): agent refused the prompt (stopReason refusal) [turn_refused, retryable=false]\n", errOut)

	_, errOut, code = runIn(t, t.TempDir(), "run", "-q", "--json", "hi")
	assert.Equal(t, 2, code)
	assert.Equal(t, "acpdrive run: --quiet and --json exclude each other\n", errOut)
}

// TestDeclaredGapSaidOnceInTheSummary: the declared capability gaps are
// said in the summary; the notice at the start only with --verbose.
func TestDeclaredGapSaidOnceInTheSummary(t *testing.T) {
	notice := "· this session started with a declared capability gap in: token counts, session continuation\n"
	stdout, _, code := runIn(t, t.TempDir(), "run", "hello")
	require.Equal(t, 0, code)
	assert.NotContains(t, stdout, notice)
	assert.Equal(t, 1, strings.Count(stdout, "capability gaps: token counts, session continuation"))
	stdout, _, code = runIn(t, t.TempDir(), "run", "--verbose", "hello")
	require.Equal(t, 0, code)
	assert.True(t, strings.HasPrefix(stdout, notice), stdout)
}

// TestNotFoundTellsMissingFromNotOffered: agent_not_found says, in words
// and in a reason field, whether the program is missing or the runtime
// does not offer what was asked.
func TestNotFoundTellsMissingFromNotOffered(t *testing.T) {
	bin := testbin.Path(t)
	cases := []struct {
		args         []string
		reason, line string
	}{
		{[]string{"run", "--command", bin + " agent --scenario session-config", "--mode", "yolo", "hi"}, "not_offered",
			`session could not start: the runtime was found and answered, but does not offer what was asked: agent: agent_not_found: session configuration refused: mode: "yolo" is not offered; the runtime offers default, acceptEdits, plan, auto`},
		{[]string{"run", "--protocol", "2", "hi"}, "protocol_unsupported",
			"session could not start: the runtime was found and answered, but speaks another ACP version: agent: agent_not_found: agent answered protocol version 1; --protocol 2 accepts only 2"},
		{[]string{"sessions", "list"}, "not_offered",
			"acpdrive sessions list: the runtime was found and answered, but does not offer what was asked: agent: agent_not_found: the runtime does not advertise sessionCapabilities.list; session/list was not sent"},
		{[]string{"run", "--command", "acpdrive-no-such-runtime", "hi"}, "program_missing",
			`session could not start: agent: agent_not_found: agent command "acpdrive-no-such-runtime" was not found on PATH`},
	}
	for _, c := range cases {
		_, stderr, code := runIn(t, t.TempDir(), c.args...)
		assert.Equal(t, 3, code, "%q", c.args)
		assert.True(t, strings.HasPrefix(stderr, c.line), "%q: %s", c.args, stderr)
		stdout, _, code := runIn(t, t.TempDir(), append(c.args, "--json")...)
		assert.Equal(t, 3, code, "%q", c.args)
		last := lastObject(t, stdout)
		assert.Equal(t, "agent_not_found", last["error_kind"], "%q", c.args)
		assert.Equal(t, c.reason, last["reason"], "%q", c.args)
	}
}

// TestThoughtCarriedInJSON: a reasoning block's other_message carries the
// thought's text.
func TestThoughtCarriedInJSON(t *testing.T) {
	stdout, stderr, code := runIn(t, t.TempDir(), "run", "--json", "#updates")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, `"type":"other_message",`)
	assert.Contains(t, stdout, `"message":"reasoning block","thought":"Thinking about the task."}`)
}

// TestExitStatuses: each row of README's exit-status table, through the
// binary; a refused turn and one that needs a person are told from any
// other turn that did not complete.
func TestExitStatuses(t *testing.T) {
	cases := []struct {
		code int
		args []string
	}{
		{0, []string{"run", "hello"}},
		{1, []string{"run", "#stop-max_tokens"}},
		{1, []string{"run", "--command", testbin.Path(t) + " agent --scenario crash", "hi"}},
		{2, []string{"run", "--read-timeout", "soon", "hi"}},
		{3, []string{"run", "--command", "acpdrive-no-such-runtime", "hi"}},
		{4, []string{"run", "#stop-refusal"}},
		{4, []string{"run", "--read-timeout", "1s", "#permission-no-reject"}},
		{4, []string{"run", "--read-timeout", "1s", "#elicitation"}},
	}
	for _, c := range cases {
		_, _, code := runIn(t, t.TempDir(), c.args...)
		assert.Equal(t, c.code, code, "%q", c.args)
	}
}
