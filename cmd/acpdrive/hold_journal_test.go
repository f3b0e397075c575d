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
)

// burstChunks is more messages than the holder keeps in memory (the
// latest 4,096, up to twice as many): the first of them are held only on
// disk once the run received them all.
const burstChunks = 10000

// burstTurnScript is a burst of burstChunks chunks, then a pause in which
// the run is killed, then the turn's end.
var burstTurnScript = `{"defaultTurn":"burst","turns":{"burst":{"steps":[
{"step":"burst","count":` + strconv.Itoa(burstChunks) + `},{"step":"sleep","ms":1500},
{"step":"text","text":" end"},{"step":"stop","stopReason":"end_turn"}]}}}`

// TestHeldRunJournalOnDisk: a held run killed after more messages than
// the holder keeps in memory is attached to from its first message (the
// holder's journal on disk): the joined events equal an uninterrupted
// run's, none lost, none twice (docs/behaviour.md#held-sessions).
func TestHeldRunJournalOnDisk(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := filepath.Join(dir, "burst.json")
	require.NoError(t, os.WriteFile(script, []byte(burstTurnScript), 0o600))
	env := []string{"XDG_RUNTIME_DIR=" + shortDir(t)}
	bin := testbin.Path(t)
	agent := func(marker string) string { return bin + " agent --script " + script + " --agent-name " + marker }

	// The uninterrupted run.
	marker := "held-journal-whole-" + strconv.Itoa(os.Getpid())
	stdout, stderr, code := runEnv(t, dir, env, "run", "--hold", "--hold-lease", "5s", "--json", "--command", agent(marker), "go")
	require.Equal(t, 0, code, stderr)
	whole := turnEvents(t, stdout)
	require.Greater(t, len(whole), burstChunks)
	proctest.WaitCmdlineGone(t, marker, 30*time.Second)

	// The run killed once it printed the whole burst.
	marker = "held-journal-killed-" + strconv.Itoa(os.Getpid())
	cmd := exec.Command(bin, "run", "--hold", "--hold-lease", "5s", "--json", "--command", agent(marker), "go")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its group is killed whole: the holder is not in it
	t.Cleanup(func() {
		for _, pid := range proctest.WithCmdline(marker) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	pipe, err := cmd.StdoutPipe()
	require.NoError(t, err)
	runErr, err := os.Create(filepath.Join(dir, "run.stderr"))
	require.NoError(t, err)
	defer runErr.Close()
	cmd.Stderr = runErr
	require.NoError(t, cmd.Start())
	var before strings.Builder
	ref, chunks := "", 0
	rd := bufio.NewReader(pipe)
	for chunks < burstChunks {
		line, err := rd.ReadString('\n')
		require.NoError(t, err, "the run ended before the burst's end; stderr: %s", mustRead(t, runErr.Name()))
		before.WriteString(line)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		if r, ok := m["session_ref"].(string); ok {
			ref = r
		}
		if m["type"] == "message_chunk" {
			chunks++
		}
	}
	require.NoError(t, syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL))
	rest, _ := io.ReadAll(rd)
	before.Write(rest)
	_ = cmd.Wait()
	require.NotEmpty(t, ref)
	holderDir := filepath.Dir(tokenFileOf(t, ref))
	files, err := filepath.Glob(filepath.Join(holderDir, "journal-*"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "the holder keeps its journal in its directory")
	for _, f := range files {
		fi, err := os.Stat(f)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	}

	stdout, stderr, code = runEnv(t, dir, env, "attach", ref, "--json")
	require.Equal(t, 0, code, stderr)
	pre, post := turnEvents(t, before.String()), turnEvents(t, stdout)
	require.NotContains(t, pre, heldEvent{Type: "turn_result"}, "killed mid-turn")
	require.Greater(t, len(post), len(pre))
	assert.Equal(t, pre, post[:len(pre)], "the killed run's events are the turn's first ones")
	joined := append(append([]heldEvent{}, pre...), post[len(pre):]...)
	assert.Equal(t, whole, joined, "none lost, none twice")

	proctest.WaitCmdlineGone(t, marker, 30*time.Second)
	assert.Eventually(t, func() bool {
		_, err := os.Stat(holderDir)
		return os.IsNotExist(err)
	}, 30*time.Second, 20*time.Millisecond, "the holder removed its directory, its journal with it")
}
