package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/internal/testsupport/mcpstarter"
	"github.com/acpdrive/acpdrive/internal/testsupport/proctest"
	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == mcpstarter.Subcommand {
		// This test binary is the fake runtime that starts the declared
		// stdio servers (the tool-server confirmation tests).
		os.Exit(mcpstarter.Main(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// line is any JSON line the CLI prints.
type line struct {
	Type           string   `json:"type"`
	Message        string   `json:"message"`
	SessionID      string   `json:"session_id"`
	AgentPID       int      `json:"agent_pid"`
	Turn           int      `json:"turn"`
	Outcome        string   `json:"outcome"`
	ErrorKind      string   `json:"error_kind"`
	Retryable      *bool    `json:"retryable"`
	StopReason     string   `json:"stop_reason"`
	CapabilityGaps []string `json:"capability_gaps"`
	Turns          int      `json:"turns"`
	Time           string   `json:"time"`
}

// runIn runs the CLI in dir and returns its stdout, stderr and exit code.
func runIn(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(testbin.Path(t), args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return stdout.String(), stderr.String(), code
}

// run runs the CLI in a fresh directory and returns its JSON lines, stderr
// and exit code.
func run(t *testing.T, args ...string) ([]line, string, int) {
	t.Helper()
	stdout, stderr, code := runIn(t, t.TempDir(), args...)
	return parseLines(t, stdout), stderr, code
}

func parseLines(t *testing.T, out string) []line {
	t.Helper()
	var lines []line
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if !strings.HasPrefix(sc.Text(), "{") {
			continue
		}
		var l line
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l), sc.Text())
		lines = append(lines, l)
	}
	return lines
}

func ofType(lines []line, typ string) []line {
	var out []line
	for _, l := range lines {
		if l.Type == typ {
			out = append(out, l)
		}
	}
	return out
}

func TestRunJSONTwoTurns(t *testing.T) {
	lines, stderr, code := run(t, "run", "--json", "hello", "#tools")
	require.Equal(t, 0, code, stderr)
	results := ofType(lines, "turn_result")
	require.Len(t, results, 2)
	for i, r := range results {
		assert.Equal(t, i+1, r.Turn)
		assert.Equal(t, "turn_completed", r.Outcome)
		assert.Equal(t, "end_turn", r.StopReason)
		assert.Empty(t, r.ErrorKind)
		assert.Nil(t, r.Retryable)
	}
	assert.Len(t, ofType(lines, "session_started"), 2)
	assert.Len(t, ofType(lines, "tool_result"), 11)
	last := lines[len(lines)-1]
	assert.Equal(t, "run_result", last.Type)
	assert.Equal(t, "ref-1", last.SessionID)
	assert.NotZero(t, last.AgentPID)
	assert.Equal(t, 2, last.Turns)
	assert.Equal(t, []string{"token counts", "session continuation"}, last.CapabilityGaps)
	for _, l := range lines {
		if l.Type != "run_result" && l.Type != "turn_result" {
			_, err := time.Parse(time.RFC3339, l.Time)
			assert.NoError(t, err, "event time %q", l.Time)
		}
	}
	var reply []string
	for _, l := range ofType(lines, "notification") {
		reply = append(reply, l.Message)
	}
	assert.Contains(t, reply, "hello")
	proctest.WaitGroupEmpty(t, last.AgentPID, 2*time.Second)
}

func TestRunStopsAtFirstTurnThatDoesNotComplete(t *testing.T) {
	lines, _, code := run(t, "run", "--json", "#stop-refusal", "never sent")
	assert.Equal(t, 4, code, "a refused turn: exit 4")
	results := ofType(lines, "turn_result")
	require.Len(t, results, 1)
	r := results[0]
	assert.Equal(t, "turn_failed", r.Outcome)
	assert.Equal(t, "turn_refused", r.ErrorKind)
	require.NotNil(t, r.Retryable)
	assert.False(t, *r.Retryable)
	assert.Equal(t, "refusal", r.StopReason)
	assert.Equal(t, 1, lines[len(lines)-1].Turns)
}

func TestRunStartupFailed(t *testing.T) {
	lines, _, code := run(t, "run", "--json", "--command", "acpdrive-no-such-runtime --acp", "hi")
	assert.Equal(t, 3, code)
	require.NotEmpty(t, lines)
	assert.Equal(t, "startup_failed", lines[0].Type)
	assert.Equal(t, "agent_not_found", lines[0].ErrorKind)
	assert.Equal(t, `agent command "acpdrive-no-such-runtime" was not found on PATH`, lines[0].Message)
	assert.Len(t, lines, 1)
}

func TestRunStartupEarlyExit(t *testing.T) {
	bin := testbin.Path(t)
	lines, _, code := run(t, "run", "--json", "--command", bin+" agent --scenario 'exit-before-init'", "hi")
	assert.Equal(t, 3, code)
	require.Len(t, lines, 1)
	assert.Equal(t, "port_exit", lines[0].ErrorKind)
	assert.True(t, strings.HasPrefix(lines[0].Message, "the agent runtime exited before responding: exit status 7"), lines[0].Message)
}

func TestRunStartupUnsupportedProtocolVersion(t *testing.T) {
	bin := testbin.Path(t)
	lines, _, code := run(t, "run", "--json", "--command", bin+" agent --scenario unsupported-version", "hi")
	assert.Equal(t, 3, code)
	require.Len(t, lines, 1)
	assert.Equal(t, "startup_failed", lines[0].Type)
	assert.Equal(t, "agent_not_found", lines[0].ErrorKind)
	assert.Equal(t, "agent does not support protocol version 1; it supports 2", lines[0].Message)
	_, stderr, code := runIn(t, t.TempDir(), "run", "--command", bin+" agent --scenario unsupported-version", "hi")
	assert.Equal(t, 3, code)
	assert.Contains(t, stderr, `agent does not support protocol version 1; it supports 2: initialize error -32022: Unsupported protocol version (data: {"requested":1,"supported":[2]})`)
}

func TestRunUsageErrors(t *testing.T) {
	cases := [][]string{
		{"run"},                                 // no prompt
		{"run", "--read-timeout", "soon", "hi"}, // bad duration
		{"run", "--command", `agent "unterminated`, "hi"},
		{"run", "--stop-grace", "0s", "hi"}, // validation
		{"frobnicate"},
		{},
	}
	for _, args := range cases {
		_, stderr, code := run(t, args...)
		assert.Equal(t, 2, code, "args %q: %s", args, stderr)
		assert.NotEmpty(t, stderr, "args %q", args)
	}
}

func TestRunHumanOutput(t *testing.T) {
	cmd := exec.Command(testbin.Path(t), "run", "hello human", "#permission-refusable")
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	text := string(out)
	assert.Contains(t, text, "hello human")
	assert.Contains(t, text, "── turn 1: turn_completed (stop reason end_turn)")
	assert.Contains(t, text, "· refused a permission request because this run is unattended and no one can approve it")
	assert.Contains(t, text, "── turn 2: turn_completed")
	assert.Contains(t, text, "session ref-1")
	assert.Equal(t, 1, strings.Count(text, "hello human"), "the reply is streamed once, not repeated by its report")
}

// TestRunUpdatesJSON: every update of the reference agent's #updates turn
// is one --json line with its content; none is empty, and the runtime's
// notices never reach the reply.
func TestRunUpdatesJSON(t *testing.T) {
	stdout, stderr, code := runIn(t, t.TempDir(), "run", "--json", "#updates")
	require.Equal(t, 0, code, stderr)
	byType := map[string][]map[string]any{}
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), sc.Text())
		typ, _ := m["type"].(string)
		byType[typ] = append(byType[typ], m)
		switch typ {
		case "session_started", "turn_completed", "turn_result", "run_result":
		default:
			assert.NotEmpty(t, m["message"], "no event without content: %s", sc.Text())
		}
	}
	cases := []struct {
		typ, field string
		want       any
	}{
		{"commands_available", "commands", []any{map[string]any{"name": "web", "description": "Search the web"}}},
		{"mode_changed", "mode_id", "code"},
		{"config_options", "config_options", []any{map[string]any{"id": "model", "name": "Model", "value": "m1", "values": []any{"m1"}}}},
		{"session_info", "title", "Reference session"},
		{"context_usage", "context", map[string]any{"used": 53000.0, "size": 200000.0, "cost": map[string]any{"amount": 0.045, "currency": "USD"}}},
		{"tool_result", "tool_title", "Read README.md"},
		{"tool_result", "tool_status", "completed"},
		{"tool_result", "tool_name", "read"},
	}
	for _, c := range cases {
		require.Len(t, byType[c.typ], 1, c.typ)
		assert.Equal(t, c.want, byType[c.typ][0][c.field], "%s.%s", c.typ, c.field)
	}
	var notices []string
	for _, n := range byType["runtime_notice"] {
		notices = append(notices, n["message"].(string)+" ["+n["notice"].(map[string]any)["source"].(string)+"]")
	}
	assert.Equal(t, []string{
		"Claude Code is running in a sandbox. [agent_message_chunk]",
		"authentication: Anthropic API key (api_key, ANTHROPIC_API_KEY) [_auth/status_update]",
		"MCP server down [notice]",
	}, notices)
	var chunks, reply []string
	for _, c := range byType["message_chunk"] {
		chunks = append(chunks, c["message"].(string))
	}
	assert.Equal(t, []string{"Before the session-state updates. ", "After the session-state updates."}, chunks)
	for _, n := range byType["notification"] {
		reply = append(reply, n["message"].(string))
	}
	assert.Contains(t, reply, "Before the session-state updates. After the session-state updates.")
}

// TestRunUpdatesHuman: a person sees the title, the mode, the notices and
// the context use in the turn summary; not the commands or options.
func TestRunUpdatesHuman(t *testing.T) {
	stdout, stderr, code := runIn(t, t.TempDir(), "run", "#updates", "#updates")
	require.Equal(t, 0, code, stderr)
	for _, want := range []string{
		"· title: Reference session\n",
		"· mode: code\n",
		"· notice: Claude Code is running in a sandbox.\n",
		"· notice: authentication: Anthropic API key (api_key, ANTHROPIC_API_KEY)\n",
		"· notice: MCP server down\n",
		"; cost 0.0450 USD; context 53,000 / 200,000\n", // the first turn: the cumulative cost from zero
		"; cost 0.0000 USD; context 53,000 / 200,000\n", // the second: the cumulative cost did not move
		"⚙ read ok (",
	} {
		assert.Contains(t, stdout, want)
	}
	assert.Equal(t, 1, strings.Count(stdout, "· title: "), "an unchanged title is shown once")
	assert.Equal(t, 1, strings.Count(stdout, "· mode: "), "an unchanged mode is shown once")
	assert.Equal(t, 2, strings.Count(stdout, "; context "), "each turn's summary shows its context use")
	assert.NotContains(t, stdout, "web", "commands are not shown")
	assert.NotContains(t, stdout, "model=m1", "options are not shown")
	assert.Equal(t, 2, strings.Count(stdout, "Claude Code is running in a sandbox."), "a notice is never reply text")
}

func TestRunSIGINTCancelsTheTurn(t *testing.T) {
	cmd := exec.Command(testbin.Path(t), "run", "--json", "#wait-cancel", "never sent")
	cmd.Dir = t.TempDir()
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(stdout)
	var lines []line
	signalled := false
	for sc.Scan() {
		var l line
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l))
		lines = append(lines, l)
		// The agent's first chunk says the turn is under way.
		if !signalled && l.Type == "message_chunk" {
			require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
			signalled = true
		}
	}
	err = cmd.Wait()
	require.Error(t, err)
	assert.Equal(t, 1, cmd.ProcessState.ExitCode())
	results := ofType(lines, "turn_result")
	require.Len(t, results, 1)
	assert.Equal(t, "turn_cancelled", results[0].Outcome)
	assert.Equal(t, "turn_cancelled", results[0].ErrorKind)
	last := lines[len(lines)-1]
	assert.Equal(t, "run_result", last.Type)
	assert.Equal(t, 1, last.Turns)
	proctest.WaitGroupEmpty(t, last.AgentPID, 2*time.Second)
}

func TestAgentSubcommandAndVersion(t *testing.T) {
	out, err := exec.Command(testbin.Path(t), "version").Output()
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(out), "acpdrive "))
	out, err = exec.Command(testbin.Path(t), "agent", "--list-scenarios").Output()
	require.NoError(t, err)
	assert.Contains(t, string(out), "wrong-version")
}

func TestRunSecondSIGINTStopsTheSession(t *testing.T) {
	// The agent never answers the prompt, and the wait after the cancel is
	// long: only the second SIGINT can end the run quickly.
	cmd := exec.Command(testbin.Path(t), "run", "--json", "--read-timeout", "60s", "#no-response")
	cmd.Dir = t.TempDir()
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(stdout)
	var lines []line
	sent := 0
	for sc.Scan() {
		var l line
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l))
		lines = append(lines, l)
		if sent == 0 && l.Type == "message_chunk" {
			require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
			time.Sleep(300 * time.Millisecond)
			require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
			sent = 2
		}
	}
	_ = cmd.Wait()
	assert.Equal(t, 1, cmd.ProcessState.ExitCode())
	results := ofType(lines, "turn_result")
	require.Len(t, results, 1)
	assert.Equal(t, "turn_cancelled", results[0].Outcome)
	last := lines[len(lines)-1]
	require.Equal(t, "run_result", last.Type)
	proctest.WaitGroupEmpty(t, last.AgentPID, 2*time.Second)
}

func TestRunDrainBoundWhenADescendantHoldsStdout(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out the real 5 s drain bound")
	}
	lines, stderr, code := run(t, "run", "--json", "--log-level", "warn", "#orphan-stdout", "refused")
	assert.Equal(t, 1, code)
	results := ofType(lines, "turn_result")
	require.Len(t, results, 1)
	assert.Equal(t, "port_exit", results[0].ErrorKind)
	assert.Equal(t, "the agent runtime exited before the session finished collecting its output", results[0].Message)
	assert.Contains(t, stderr, "agent stdout was not fully collected before the session ended")
	assert.Contains(t, stderr, "drain_bound=5s")
	proctest.WaitGroupEmpty(t, lines[len(lines)-1].AgentPID, 2*time.Second)
}

func TestProbeJSON(t *testing.T) {
	bin := testbin.Path(t)
	cmd := exec.Command(bin, "probe", "--json", "--command", bin+" agent --scenario full-caps")
	cmd.Dir = t.TempDir()
	out, err := cmd.Output()
	require.NoError(t, err)
	var report struct {
		AgentPID        int `json:"agent_pid"`
		ProtocolVersion int `json:"protocol_version"`
		AgentInfo       struct {
			Name string `json:"name"`
		} `json:"agent_info"`
		LoadSession         bool     `json:"load_session"`
		SessionCapabilities []string `json:"session_capabilities"`
		NegativeControl     struct {
			Answered bool   `json:"answered"`
			Code     *int64 `json:"code"`
		} `json:"negative_control"`
		ContinuationRoute string `json:"continuation_route"`
		TeardownMethod    string `json:"teardown_method"`
		Capabilities      []struct {
			Label string `json:"label"`
			State string `json:"state"`
		} `json:"capabilities"`
	}
	require.NoError(t, json.Unmarshal(out, &report), string(out))
	assert.Equal(t, 1, report.ProtocolVersion)
	assert.Equal(t, "acpdrive-reference-agent", report.AgentInfo.Name)
	assert.True(t, report.LoadSession)
	assert.Equal(t, []string{"list", "delete", "resume", "close"}, report.SessionCapabilities)
	assert.True(t, report.NegativeControl.Answered)
	require.NotNil(t, report.NegativeControl.Code)
	assert.Equal(t, int64(-32601), *report.NegativeControl.Code)
	assert.Equal(t, "session/load", report.ContinuationRoute)
	assert.Equal(t, "session/close", report.TeardownMethod)
	require.Len(t, report.Capabilities, 4)
	assert.Equal(t, "token counts", report.Capabilities[1].Label)
	assert.Equal(t, "gap", report.Capabilities[1].State)
	proctest.WaitGroupEmpty(t, report.AgentPID, 2*time.Second)
}

func TestProbeHumanAndFailure(t *testing.T) {
	cmd := exec.Command(testbin.Path(t), "probe")
	cmd.Dir = t.TempDir()
	out, err := cmd.Output()
	require.NoError(t, err)
	text := string(out)
	for _, want := range []string{"acpdrive-reference-agent", "continuation route", "none (session/new only)",
		"negative control", `error -32601 "Method not found"`, "capability: session continuation  gap"} {
		assert.Contains(t, text, want)
	}
	_, _, code := run(t, "probe", "--command", "acpdrive-no-such-runtime")
	assert.Equal(t, 3, code)
}

// TestProbeSession: probe --session shows everything the runtime
// advertises and what its throwaway session offered, in both outputs.
func TestProbeSession(t *testing.T) {
	bin := testbin.Path(t)
	agent := bin + " agent --scenario advertise-all"
	stdout, stderr, code := runIn(t, t.TempDir(), "probe", "--session", "--json", "--command", agent)
	require.Equal(t, 0, code, stderr)
	var report map[string]any
	require.NoError(t, json.Unmarshal([]byte(stdout), &report), stdout)
	assert.Equal(t, []any{"list", "delete", "additionalDirectories", "resume", "close", "fork", "subagents", "systemPrompt", "title"}, report["session_capabilities"])
	assert.Equal(t, []any{"logout"}, report["auth_capabilities"])
	assert.Equal(t, []any{}, report["providers"])
	assert.Equal(t, []any{"authStatus.kind", "claudeCode.promptQueueing"}, report["meta_keys"])
	session, ok := report["session"].(map[string]any)
	require.True(t, ok, stdout)
	assert.Equal(t, "default", session["current_mode"])
	assert.Equal(t, "opus", session["current_model"])
	assert.Equal(t, "session/delete", session["ended_with"])
	assert.Len(t, session["config_options"], 2)
	assert.Len(t, session["commands"], 2)

	stdout, stderr, code = runIn(t, t.TempDir(), "probe", "--session", "--command", agent)
	require.Equal(t, 0, code, stderr)
	for _, want := range []string{
		`systemPrompt {"mode":{"override":{}}}, title`,
		"auth methods                      api-key (API key), chat-gpt (ChatGPT)",
		"auth capabilities                 logout",
		"providers                         advertised",
		"_meta keys                        authStatus.kind, claudeCode.promptQueueing",
		"session: modes                    default (Manual) [current], auto (Auto)",
		"session: config options           mode=default {default|auto}, fast=false",
		"session: models                   opus [current], haiku",
		"session: commands                 /compact, /review",
		"session: ended with               session/delete",
	} {
		assert.Contains(t, stdout, want)
	}
	stdout, _, code = runIn(t, t.TempDir(), "probe", "--command", agent)
	require.Equal(t, 0, code)
	assert.NotContains(t, stdout, "session: ", "without --session no session is created")
}

func TestRunResumeReportsTheSessionActuallyRun(t *testing.T) {
	bin := testbin.Path(t)
	// The runtime can resume: the saved identifier is the one run.
	lines, stderr, code := run(t, "run", "--json", "--command", bin+" agent --scenario resume", "--resume", "saved-7", "hi")
	require.Equal(t, 0, code, stderr)
	last := lines[len(lines)-1]
	assert.Equal(t, "saved-7", last.SessionID)
	assert.NotContains(t, last.CapabilityGaps, "session continuation")
	// The runtime cannot: a fallback to a new session, reported as a gap.
	lines, stderr, code = run(t, "run", "--json", "--command", bin+" agent --scenario resume-error", "--resume", "saved-7", "hi")
	require.Equal(t, 0, code, stderr)
	last = lines[len(lines)-1]
	assert.Equal(t, "ref-1", last.SessionID)
	assert.Contains(t, last.CapabilityGaps, "session continuation")
}

func TestRunVerifyCredential(t *testing.T) {
	bin := testbin.Path(t)
	lines, _, code := run(t, "run", "--json", "--verify-credential", "--command", bin+" agent --scenario auth-required", "hi")
	assert.Equal(t, 3, code)
	require.Len(t, lines, 1)
	assert.Equal(t, "startup_failed", lines[0].Type)
	assert.Equal(t, "credential_unverified", lines[0].ErrorKind)
	assert.Equal(t, "the agent runtime refused its credential: Authentication required", lines[0].Message)

	lines, stderr, code := run(t, "run", "--json", "--verify-credential", "hi")
	require.Equal(t, 0, code, stderr)
	assert.Len(t, ofType(lines, "session_started"), 1, "the verification session's events are not printed")
}

// writeRunWorkflow writes a WORKFLOW.md and an MCP file beside it.
func writeRunWorkflow(t *testing.T, command string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(dir+"/mcp-servers.json",
		[]byte(`{"mcpServers":{"files":{"command":"/bin/cat","args":[]},"web":{"type":"http","url":"http://127.0.0.1:9/mcp"}}}`), 0o600))
	wf := "---\nagent:\n  kind: agent-client-protocol\n  command: " + command + "\n  read_timeout_ms: 4000\nagent-client-protocol:\n  mcp_config: ./mcp-servers.json\n---\n# Workflow\n"
	require.NoError(t, os.WriteFile(dir+"/WORKFLOW.md", []byte(wf), 0o600))
	return dir + "/WORKFLOW.md"
}

func TestRunWorkflow(t *testing.T) {
	bin := testbin.Path(t)
	wf := writeRunWorkflow(t, bin+" agent --scenario no-agent-info")
	// The workflow's command runs (no agentInfo), and its MCP file is
	// delivered relative to WORKFLOW.md: the http server is withheld.
	lines, stderr, code := run(t, "run", "--json", "--workflow", wf, "hi")
	require.Equal(t, 0, code, stderr)
	last := lines[len(lines)-1]
	assert.Equal(t, []string{"tool servers", "token counts", "session continuation", "agent version"}, last.CapabilityGaps)
	// A flag overrides the file.
	lines, stderr, code = run(t, "run", "--json", "--workflow", wf, "--command", bin+" agent --scenario full-caps", "hi")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, []string{"token counts"}, lines[len(lines)-1].CapabilityGaps)
}

func TestRunWorkflowInvalid(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(dir+"/WORKFLOW.md", []byte("---\nagent:\n  kind: agent-client-protocol\n---\n"), 0o600))
	_, stderr, code := run(t, "run", "--workflow", dir+"/WORKFLOW.md", "hi")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `agent.command is required for agent kind "agent-client-protocol"`)
	_, stderr, code = run(t, "run", "--workflow", dir+"/missing.md", "hi")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "missing.md")
}

// TestRunOutputStaysLive: the CLI buffers its standard output, yet what
// the runtime sent reaches a reader of a pipe while the runtime waits. The
// agent sends one chunk and then waits for a cancel; the test sends the
// SIGINT that becomes that cancel only once it has read the chunk (human
// output) or its event line (--json), so the run can only end if the
// chunk came out while the agent was still waiting.
func TestRunOutputStaysLive(t *testing.T) {
	for _, jsonOut := range []bool{false, true} {
		name := "human"
		if jsonOut {
			name = "json"
		}
		t.Run(name, func(t *testing.T) {
			args := []string{"run", "#cancel-ignore"}
			if jsonOut {
				args = append(args, "--json")
			}
			cmd := exec.Command(testbin.Path(t), args...)
			cmd.Dir = t.TempDir()
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			r := bufio.NewReader(stdout)
			var seen bytes.Buffer
			want := "Waiting for a cancel."
			if jsonOut {
				want = `{"type":"message_chunk","time":`
			}
			for !strings.Contains(seen.String(), want) {
				b, err := r.ReadByte()
				require.NoError(t, err, "output ended before the chunk came out: %q", seen.String())
				seen.WriteByte(b)
			}
			assert.NotContains(t, seen.String(), "Ignored the cancel.", "the agent went on before the go-ahead")
			require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
			rest, err := io.ReadAll(r)
			require.NoError(t, err)
			_ = cmd.Wait()
			all := seen.String() + string(rest)
			if jsonOut {
				lines := parseLines(t, all)
				require.NotEmpty(t, lines)
				assert.Equal(t, "run_result", lines[len(lines)-1].Type)
				results := ofType(lines, "turn_result")
				require.Len(t, results, 1)
				return
			}
			assert.Contains(t, string(rest), "Ignored the cancel.")
			assert.Contains(t, string(rest), "── turn 1:")
			assert.Contains(t, string(rest), "session ref-1")
		})
	}
}
