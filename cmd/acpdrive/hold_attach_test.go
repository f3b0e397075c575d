//go:build linux

package main_test

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/internal/testsupport/proctest"
	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
	"github.com/acpdrive/acpdrive/refagent"
)

// killMidTurn starts acpdrive with args (a run --hold --json) in dir,
// SIGKILLs its whole process group once it printed its first
// message_chunk, and returns what it printed and the reference its
// session_started carried. A test that failed leaves no process whose
// command line carries marker.
func killMidTurn(t *testing.T, dir string, env []string, marker string, args ...string) (printed, ref string) {
	t.Helper()
	cmd := exec.Command(testbin.Path(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // the holder is in a session of its own
	pipe, err := cmd.StdoutPipe()
	require.NoError(t, err)
	runErr, err := os.Create(filepath.Join(dir, "run-"+marker+".stderr"))
	require.NoError(t, err)
	defer runErr.Close()
	cmd.Stderr = runErr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		for _, pid := range proctest.WithCmdline(marker) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	var before strings.Builder
	rd := bufio.NewReader(pipe)
	for {
		line, err := rd.ReadString('\n')
		require.NoError(t, err, "the run ended before its first chunk; stderr: %s", mustRead(t, runErr.Name()))
		before.WriteString(line)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		if r, ok := m["session_ref"].(string); ok && ref == "" {
			ref = r
		}
		if m["type"] == "message_chunk" {
			break
		}
	}
	require.NoError(t, syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL))
	rest, _ := io.ReadAll(rd)
	before.Write(rest)
	_ = cmd.Wait()
	require.NotEmpty(t, ref, "session_started names the held session")
	return before.String(), ref
}

// received counts the messages of a method the reference agent logged
// (a response is counted by the method of the request it answers).
func received(t *testing.T, log, method string) int {
	t.Helper()
	recs, err := refagent.ReadLog(log)
	require.NoError(t, err)
	n := 0
	for _, r := range recs {
		if r.Method == method || (r.Kind == "response" && r.Answers == method) {
			n++
		}
	}
	return n
}

// lastLine is out's last JSON line, decoded.
func lastLine(t *testing.T, out string) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &m), out)
	return m
}

// TestHeldAttachSendsTheRest: run --hold P1 P2 SIGKILLed mid-P1; attach
// completes the run: P1's turn, then P2 — sent once, by attach — and
// ends with run_result of two turns; the turn events the killed run
// printed, followed by those attach adds, are exactly an uninterrupted
// held run's, and the agent received two prompts
// (docs/behaviour.md#held-sessions).
func TestHeldAttachSendsTheRest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := filepath.Join(dir, "slow.json")
	require.NoError(t, os.WriteFile(script, []byte(slowTurnScript), 0o600))
	env := []string{"XDG_RUNTIME_DIR=" + shortDir(t)}
	bin := testbin.Path(t)
	agent := func(log, marker string) string {
		return bin + " agent --script " + script + " --log " + log + " --agent-name " + marker
	}

	marker := "held-rest-whole-" + strconv.Itoa(os.Getpid())
	stdout, stderr, code := runEnv(t, dir, env, "run", "--hold", "--hold-lease", "3s", "--json",
		"--command", agent(filepath.Join(dir, "whole.log"), marker), "first", "second")
	require.Equal(t, 0, code, stderr)
	whole := turnEvents(t, stdout)
	proctest.WaitCmdlineGone(t, marker, 30*time.Second)

	marker = "held-rest-killed-" + strconv.Itoa(os.Getpid())
	log := filepath.Join(dir, "killed.log")
	before, ref := killMidTurn(t, dir, env, marker, "run", "--hold", "--hold-lease", "10s", "--json",
		"--command", agent(log, marker), "first", "second")
	fi, err := os.Stat(filepath.Join(filepath.Dir(tokenFileOf(t, ref)), "prompts"))
	require.NoError(t, err, "the run wrote its prompts where its token is")
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	stdout, stderr, code = runEnv(t, dir, env, "attach", ref, "--json")
	require.Equal(t, 0, code, stderr)
	pre, post := turnEvents(t, before), turnEvents(t, stdout)
	require.NotEmpty(t, pre)
	require.GreaterOrEqual(t, len(post), len(pre))
	assert.Equal(t, pre, post[:len(pre)], "attach prints the run from its start")
	joined := append(append([]heldEvent{}, pre...), post[len(pre):]...)
	assert.Equal(t, whole, joined, "none lost, none twice")

	starts := 0
	for _, m := range comparable(t, stdout) {
		if m["type"] == "session_started" {
			starts++
			assert.Equal(t, ref, m["session_ref"])
		}
	}
	assert.Equal(t, 2, starts, "each turn opens with session_started, as a run's")
	end := lastLine(t, stdout)
	assert.Equal(t, "run_result", end["type"])
	assert.EqualValues(t, 2, end["turns"])
	assert.NotEmpty(t, end["session_id"])
	assert.Equal(t, 2, received(t, log, "session/prompt"), "each prompt sent once")
	proctest.WaitCmdlineGone(t, marker, 30*time.Second)
}

// pendingPermissionScript asks a permission the run answers at once,
// then, seconds later (the run killed by then), one nobody answered.
const pendingPermissionScript = `{"defaultTurn":"ask","turns":{"ask":{"steps":[
{"step":"permission","report":true,"toolCallId":"p-1","title":"Read a.txt","kind":"read"},
{"step":"text","text":"first answered. "},{"step":"sleep","ms":1500},
{"step":"permission","report":true,"toolCallId":"p-2","title":"Read b.txt","kind":"read"},
{"step":"text","text":"done"},{"step":"stop","stopReason":"end_turn"}]}}}`

// TestHeldAttachAnswersPending: a held run killed while a permission
// request is coming: attach answers the one nobody answered with its own
// policy (--permissions read: allow), once, and not the one the killed
// run answered; the agent got exactly one answer to each
// (docs/behaviour.md#held-sessions).
func TestHeldAttachAnswersPending(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := filepath.Join(dir, "ask.json")
	require.NoError(t, os.WriteFile(script, []byte(pendingPermissionScript), 0o600))
	env := []string{"XDG_RUNTIME_DIR=" + shortDir(t)}
	bin := testbin.Path(t)
	marker := "held-pending-" + strconv.Itoa(os.Getpid())
	log := filepath.Join(dir, "agent.log")
	before, ref := killMidTurn(t, dir, env, marker, "run", "--hold", "--hold-lease", "10s", "--json", "--permissions", "read",
		"--command", bin+" agent --script "+script+" --log "+log+" --agent-name "+marker, "go")
	require.Contains(t, before, `"permission_decision"`, "the killed run answered the first request")

	stdout, stderr, code := runEnv(t, dir, env, "attach", ref, "--json", "--permissions", "read")
	require.Equal(t, 0, code, stderr)
	decisions := 0
	for _, m := range comparable(t, stdout) {
		if m["type"] == "permission_decision" {
			decisions++
			assert.Contains(t, m["message"], "b.txt", "attach answered the request nobody answered")
		}
	}
	assert.Equal(t, 1, decisions, "attach answered one request")
	assert.Contains(t, stdout, "permission outcome: selected allow", "answered per attach's --permissions")
	end := lastLine(t, stdout)
	assert.Equal(t, "run_result", end["type"])
	assert.EqualValues(t, 1, end["turns"])
	assert.Equal(t, 2, received(t, log, "session/request_permission"), "one answer to each request")
	assert.Equal(t, 1, received(t, log, "session/prompt"))
	proctest.WaitCmdlineGone(t, marker, 30*time.Second)
}
