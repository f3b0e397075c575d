//go:build linux

package main_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/url"
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

// slowTurnScript is a turn of several seconds: chunks with sleeps
// between them.
const slowTurnScript = `{"defaultTurn":"slow","turns":{"slow":{"steps":[
{"step":"text","text":"one "},{"step":"sleep","ms":1200},
{"step":"text","text":"two "},{"step":"sleep","ms":1200},
{"step":"text","text":"three "},{"step":"sleep","ms":600},
{"step":"text","text":"four"},{"step":"stop","stopReason":"end_turn"}]}}}`

// heldEvent is what a held turn's event is compared by: what acpdrive
// guarantees of it, not its time.
type heldEvent struct {
	Type, Message, MessageID, Origin, Outcome, StopReason, Reply string
}

// turnEvents are the turn's events of --json output: the agent's chunks
// and messages, the turn's outcome and its result (acpdrive's own
// session_started and notices are the run's, not the turn's).
func turnEvents(t *testing.T, out string) []heldEvent {
	t.Helper()
	var evs []heldEvent
	for _, m := range comparable(t, out) {
		s := func(k string) string { v, _ := m[k].(string); return v }
		e := heldEvent{Type: s("type"), Message: s("message"), MessageID: s("message_id"), Origin: s("origin"),
			Outcome: s("outcome"), StopReason: s("stop_reason"), Reply: s("reply")}
		switch {
		case e.Type == "session_started", e.Type == "run_result", e.Origin == "acpdrive":
			continue
		}
		evs = append(evs, e)
	}
	return evs
}

// TestHeldRunSurvivesKill: run --hold SIGKILLed mid-turn (its whole
// process group), then attach
// REF: the turn's events printed before the kill, followed by those
// attach adds, are exactly an uninterrupted held run's (none lost, none
// twice), the agent received the prompt once, and once the turn ended
// no holder, runtime or holder directory survives
// (docs/behaviour.md#held-sessions).
func TestHeldRunSurvivesKill(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := filepath.Join(dir, "slow.json")
	require.NoError(t, os.WriteFile(script, []byte(slowTurnScript), 0o600))
	runtimeDir := shortDir(t)
	env := []string{"XDG_RUNTIME_DIR=" + runtimeDir}
	bin := testbin.Path(t)
	agent := func(log, marker string) string {
		return bin + " agent --script " + script + " --log " + log + " --agent-name " + marker
	}

	// The uninterrupted run.
	marker := "held-whole-" + strconv.Itoa(os.Getpid())
	stdout, stderr, code := runEnv(t, dir, env, "run", "--hold", "--hold-lease", "3s", "--json",
		"--command", agent(filepath.Join(dir, "whole.log"), marker), "go")
	require.Equal(t, 0, code, stderr)
	whole := turnEvents(t, stdout)
	require.NotEmpty(t, whole)
	assert.Equal(t, "turn_result", whole[len(whole)-1].Type)
	proctest.WaitCmdlineGone(t, marker, 30*time.Second)

	// The killed run.
	marker = "held-killed-" + strconv.Itoa(os.Getpid())
	log := filepath.Join(dir, "killed.log")
	cmd := exec.Command(bin, "run", "--hold", "--hold-lease", "3s", "--json", "--command", agent(log, marker), "go")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its group is killed whole: the holder is not in it
	pipe, err := cmd.StdoutPipe()
	require.NoError(t, err)
	runErr, err := os.Create(filepath.Join(dir, "run.stderr"))
	require.NoError(t, err)
	defer runErr.Close()
	cmd.Stderr = runErr // a file: no copying goroutine
	require.NoError(t, cmd.Start())
	var before strings.Builder
	ref := ""
	rd := bufio.NewReader(pipe)
	for {
		line, err := rd.ReadString('\n')
		require.NoError(t, err, "the run ended before its first chunk; stderr: %s", mustRead(t, runErr.Name()))
		before.WriteString(line)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		if r, ok := m["session_ref"].(string); ok {
			ref = r
		}
		if m["type"] == "message_chunk" {
			break
		}
	}
	require.NoError(t, syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL))
	rest, _ := io.ReadAll(rd) // what the run printed before it died
	before.Write(rest)
	_ = cmd.Wait()
	require.NotEmpty(t, ref, "session_started names the held session")
	assert.NotContains(t, ref, mustRead(t, tokenFileOf(t, ref)), "the reference never holds the token")
	fi, err := os.Stat(tokenFileOf(t, ref))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	assert.NotEmpty(t, proctest.WithCmdline(marker), "the runtime outlives the killed run")

	stdout, stderr, code = runEnv(t, dir, env, "attach", ref, "--json")
	require.Equal(t, 0, code, stderr)
	pre, post := turnEvents(t, before.String()), turnEvents(t, stdout)
	require.NotEmpty(t, pre)
	require.NotContains(t, pre, heldEvent{Type: "turn_result"}, "killed mid-turn")
	require.GreaterOrEqual(t, len(post), len(pre))
	// attach prints the turn from its start: what the killed run printed
	// is its beginning, and the rest completes it exactly.
	assert.Equal(t, pre, post[:len(pre)], "the killed run's events are the turn's first ones")
	joined := append(append([]heldEvent{}, pre...), post[len(pre):]...)
	assert.Equal(t, whole, joined, "none lost, none twice")

	recs, err := refagent.ReadLog(log)
	require.NoError(t, err)
	prompts := 0
	for _, r := range recs {
		if r.Method == "session/prompt" {
			prompts++
		}
	}
	assert.Equal(t, 1, prompts, "the prompt was sent once")

	proctest.WaitCmdlineGone(t, marker, 30*time.Second)
	proctest.WaitCmdlineGone(t, filepath.Dir(tokenFileOf(t, ref)), 30*time.Second)
	assert.Eventually(t, func() bool {
		_, err := os.Stat(filepath.Dir(tokenFileOf(t, ref)))
		return os.IsNotExist(err)
	}, 30*time.Second, 20*time.Millisecond, "the holder removed its directory")

	// The session is gone: attach says so.
	_, stderr, code = runEnv(t, dir, env, "attach", ref, "--json")
	assert.Equal(t, 3, code)
	assert.Contains(t, stderr, "port_exit")
}

// TestHeldLeaseEnds: a held run killed mid-turn and never attached to:
// once the lease passed with no client, the holder and the runtime are
// gone (docs/behaviour.md#held-sessions).
func TestHeldLeaseEnds(t *testing.T) {
	t.Parallel()
	marker := "held-lease-" + strconv.Itoa(os.Getpid())
	killedHeldRun(t, []string{"XDG_RUNTIME_DIR=" + shortDir(t)}, marker, "1s")
	assert.NotEmpty(t, proctest.WithCmdline(marker), "held past the run's death")
	proctest.WaitCmdlineGone(t, marker, 30*time.Second)
}

// TestHeldListAndRelease: acpdrive held lists a held session by its
// reference; acpdrive release REF ends it (no holder or runtime left,
// the list empty); a second release says it is gone
// (docs/behaviour.md#held-sessions).
func TestHeldListAndRelease(t *testing.T) {
	t.Parallel()
	env := []string{"XDG_RUNTIME_DIR=" + shortDir(t)}
	marker := "held-release-" + strconv.Itoa(os.Getpid())
	ref := killedHeldRun(t, env, marker, "10m")
	dir := t.TempDir()

	stdout, stderr, code := runEnv(t, dir, env, "held", "--json")
	require.Equal(t, 0, code, stderr)
	var e struct {
		SessionRef string `json:"session_ref"`
		State      string `json:"state"`
		PID        int    `json:"pid"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &e), stdout)
	assert.Equal(t, ref, e.SessionRef)
	assert.Equal(t, "held", e.State)
	assert.Positive(t, e.PID)

	_, stderr, code = runEnv(t, dir, env, "release", ref)
	require.Equal(t, 0, code, stderr)
	proctest.WaitCmdlineGone(t, marker, 30*time.Second)
	assert.False(t, proctest.Alive(e.PID), "the holder exited")
	stdout, _, code = runEnv(t, dir, env, "held", "--json")
	assert.Equal(t, 0, code)
	assert.Empty(t, stdout)

	_, stderr, code = runEnv(t, dir, env, "release", ref)
	assert.Equal(t, 3, code)
	assert.Contains(t, stderr, "port_exit: the held session is gone")
}

// killedHeldRun starts run --hold on the slow turn (the runtime's
// command line carrying marker), SIGKILLs it after its first chunk and
// returns the reference its session_started printed. The kill is sent to
// the run's whole process group: the holder, in a session of its own,
// is not in it.
func killedHeldRun(t *testing.T, env []string, marker, lease string) string {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(dir, "slow.json")
	require.NoError(t, os.WriteFile(script, []byte(slowTurnScript), 0o600))
	bin := testbin.Path(t)
	cmd := exec.Command(bin, "run", "--hold", "--hold-lease", lease, "--json",
		"--command", bin+" agent --script "+script+" --agent-name "+marker, "go")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pipe, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { // a test that failed leaves no holder behind (its command line carries marker)
		for _, pid := range proctest.WithCmdline(marker) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	ref := ""
	sc := bufio.NewScanner(pipe)
	for sc.Scan() && !strings.Contains(sc.Text(), `"message_chunk"`) {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil && m["session_ref"] != nil {
			ref, _ = m["session_ref"].(string)
		}
	}
	require.NoError(t, syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)) // the run's whole process group
	_ = cmd.Wait()
	require.NotEmpty(t, ref)
	return ref
}

// tokenFileOf is the token file a reference names.
func tokenFileOf(t *testing.T, ref string) string {
	t.Helper()
	_, frag, ok := strings.Cut(ref, "#")
	require.True(t, ok, ref)
	for kv := range strings.SplitSeq(frag, "&") {
		if v, ok := strings.CutPrefix(kv, "token_file="); ok {
			p, err := url.QueryUnescape(v)
			require.NoError(t, err)
			return p
		}
	}
	t.Fatalf("no token_file in %s", ref)
	return ""
}

// mustRead is a file's content.
func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// TestHeldAttachStallKeepsHeld: an attach that hears nothing for its
// --stall-timeout ends with turn_timeout and leaves the session held; a
// second attach follows the same turn to its end
// (docs/behaviour.md#held-sessions).
func TestHeldAttachStallKeepsHeld(t *testing.T) {
	t.Parallel()
	env := []string{"XDG_RUNTIME_DIR=" + shortDir(t)}
	marker := "held-stall-" + strconv.Itoa(os.Getpid())
	ref := killedHeldRun(t, env, marker, "10m")
	dir := t.TempDir()

	stdout, stderr, code := runEnv(t, dir, env, "attach", ref, "--json", "--stall-timeout", "300ms")
	require.Equal(t, 1, code, stderr)
	first := turnEvents(t, stdout)
	require.NotEmpty(t, first)
	last := first[len(first)-1]
	assert.Equal(t, "turn_result", last.Type)
	assert.Equal(t, "turn_failed", last.Outcome)
	assert.Contains(t, stdout, `"error_kind":"turn_timeout"`)
	assert.NotEmpty(t, proctest.WithCmdline(marker), "still held")

	stdout, stderr, code = runEnv(t, dir, env, "attach", ref, "--json")
	require.Equal(t, 0, code, stderr)
	second := turnEvents(t, stdout)
	require.NotEmpty(t, second)
	last = second[len(second)-1]
	assert.Equal(t, "turn_completed", last.Outcome)
	assert.Equal(t, "one two three four", last.Reply)
	proctest.WaitCmdlineGone(t, marker, 30*time.Second)
}
