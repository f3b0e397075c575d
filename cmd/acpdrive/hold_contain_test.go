//go:build linux

package main_test

import (
	"bufio"
	"encoding/json"
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
)

// stubbornTurnScript is a runtime that ignores SIGTERM and stdin's end,
// and whose turn starts a descendant in its group and a daemonized one
// (a session of its own, also ignoring SIGTERM) before it waits a long
// time. MARKER is replaced by the test's marker.
const stubbornTurnScript = `{"ignoreSigterm":true,"stdinEOF":"keepRunning","defaultTurn":"long","turns":{"long":{"steps":[
{"step":"spawn","command":["sh","-c","trap '' TERM; sleep 600; :","MARKER-spawned"]},
{"step":"daemon","command":["sh","-c","trap '' TERM; sleep 600; :","MARKER-daemon"]},
{"step":"sleep","ms":600000},
{"step":"text","text":"never"},{"step":"stop","stopReason":"end_turn"}]}}}`

// heldStubbornRun starts run --hold on the stubborn turn, waits for the
// daemon's chunk, SIGKILLs the run's process group and returns the
// reference.
func heldStubbornRun(t *testing.T, env []string, marker string) string {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(dir, "stubborn.json")
	require.NoError(t, os.WriteFile(script, []byte(strings.ReplaceAll(stubbornTurnScript, "MARKER", marker)), 0o600))
	bin := testbin.Path(t)
	cmd := exec.Command(bin, "run", "--hold", "--hold-lease", "10m", "--json",
		"--command", bin+" agent --script "+script+" --agent-name "+marker, "go")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	pipe, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { // a test that failed leaves nothing behind
		for _, pid := range proctest.WithCmdline(marker) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	ref := ""
	sc := bufio.NewScanner(pipe)
	for sc.Scan() && !strings.Contains(sc.Text(), "daemon started") {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil && m["session_ref"] != nil {
			ref, _ = m["session_ref"].(string)
		}
	}
	require.NoError(t, syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL))
	_ = cmd.Wait()
	require.NotEmpty(t, ref)
	return ref
}

// descendants are pid's live descendants, read from /proc.
func descendants(pid int) []int {
	live := proctest.Live()
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for c, l := range live {
			if l.PPID == p {
				out = append(out, c)
				queue = append(queue, c)
			}
		}
	}
	return out
}

// TestHeldHolderKilled: a holder SIGKILLed mid-turn leaves no process of
// its runtime's tree behind (a runtime that ignores SIGTERM and stdin's
// end, with a descendant in its group and a daemonized one), the warden
// contains it as it contains a run's; attach then says the session is
// gone (port_exit, exit 3) and held no longer lists it
// (docs/behaviour.md#held-sessions).
func TestHeldHolderKilled(t *testing.T) {
	t.Parallel()
	env := []string{"XDG_RUNTIME_DIR=" + shortDir(t)}
	marker := "held-holderkill-" + strconv.Itoa(os.Getpid())
	ref := heldStubbornRun(t, env, marker)
	holderDir := filepath.Dir(tokenFileOf(t, ref))
	pid, err := strconv.Atoi(strings.TrimSpace(mustRead(t, filepath.Join(holderDir, "pid"))))
	require.NoError(t, err)
	require.True(t, proctest.Alive(pid), "the holder outlives the run")

	tree := descendants(pid)
	marked := proctest.WithCmdline(marker) // the holder's own command line names the runtime's
	require.GreaterOrEqual(t, len(marked), 4, "the holder, the runtime, its spawned descendant and its daemon run")
	all := append(append([]int{pid}, tree...), marked...)
	t.Cleanup(func() { // a test that failed leaves nothing behind
		for _, p := range all {
			if !t.Failed() {
				break
			}
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	})
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))

	assert.Eventually(t, func() bool {
		for _, p := range all {
			if proctest.Alive(p) {
				return false
			}
		}
		return len(proctest.WithCmdline(marker)) == 0
	}, time.Minute, 20*time.Millisecond, "nothing of the holder's runtime survives it")

	dir := t.TempDir()
	_, stderr, code := runEnv(t, dir, env, "attach", ref, "--json")
	assert.Equal(t, 3, code, stderr)
	assert.Contains(t, stderr, "acpdrive attach: port_exit: ")
	assert.Contains(t, stderr, "could not connect")

	stdout, stderr, code := runEnv(t, dir, env, "held", "--json")
	assert.Equal(t, 0, code, stderr)
	assert.Empty(t, stdout, "a killed holder is not listed")
	_, err = os.Stat(holderDir)
	assert.True(t, os.IsNotExist(err), "held removed the directory the killed holder left")
	_, stderr, code = runEnv(t, dir, env, "attach", ref, "--json")
	assert.Equal(t, 3, code, stderr)
	assert.Contains(t, stderr, "acpdrive attach: port_exit: the held session is gone (its token cannot be read: ")
}
