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
	"github.com/acpdrive/acpdrive/refagent"
)

// journalSlowScript: a prompt starting "#slow" is a turn of a few
// seconds; any other is echoed at once.
const journalSlowScript = `{"turns":{"slow":{"steps":[
{"step":"text","text":"one "},{"step":"sleep","ms":1000},
{"step":"text","text":"two "},{"step":"sleep","ms":1000},
{"step":"text","text":"three"},{"step":"stop","stopReason":"end_turn"}]}}}`

// journalBatch is a journaled batch's files and environment.
type journalBatch struct {
	dir, journal, log, marker string
	env                       []string
}

// newJournalBatch writes tasks (one JSON object a line) and the script;
// the runtime's command line carries a marker of its own and logs what
// it received.
func newJournalBatch(t *testing.T, name string, tasks []string) journalBatch {
	t.Helper()
	dir := t.TempDir()
	b := journalBatch{dir: dir, journal: filepath.Join(dir, "journal"), log: filepath.Join(dir, "agent.log"),
		marker: name + "-" + strconv.Itoa(os.Getpid()), env: []string{"XDG_RUNTIME_DIR=" + shortDir(t)}}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "slow.json"), []byte(journalSlowScript), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tasks.jsonl"), []byte(strings.Join(tasks, "\n")+"\n"), 0o600))
	t.Cleanup(func() { // a test that failed leaves nothing running (every command line carries marker)
		for _, pid := range proctest.WithCmdline(b.marker) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return b
}

// command is the runtime's command line.
func (b journalBatch) command(t *testing.T) string {
	return testbin.Path(t) + " agent --script " + filepath.Join(b.dir, "slow.json") + " --log " + b.log + " --agent-name " + b.marker
}

// prompted counts the session/prompt requests the runtimes received, by
// their text.
func (b journalBatch) prompted(t *testing.T) map[string]int {
	t.Helper()
	recs, err := refagent.ReadLog(b.log)
	if os.IsNotExist(err) {
		return map[string]int{}
	}
	require.NoError(t, err)
	out := map[string]int{}
	for _, r := range recs {
		if r.Method != "session/prompt" {
			continue
		}
		var m struct {
			Params struct {
				Prompt []struct {
					Text string `json:"text"`
				} `json:"prompt"`
			} `json:"params"`
		}
		require.NoError(t, json.Unmarshal(r.Message, &m))
		for _, p := range m.Params.Prompt {
			out[p.Text]++
		}
	}
	return out
}

// killAfter starts the journaled batch in a process group of its own and
// SIGKILLs the group once ready says so (it is given the task_result
// lines printed so far and the prompts received so far); it returns the
// lines printed before the kill. The holders, each in a session of its
// own, are not in that group.
func (b journalBatch) killAfter(t *testing.T, ready func(lines []map[string]any, prompted map[string]int) bool, flags ...string) []map[string]any {
	t.Helper()
	args := append([]string{"batch", "--json", "--journal", b.journal, "--command", b.command(t)}, flags...)
	cmd := exec.Command(testbin.Path(t), append(args, "tasks.jsonl")...)
	cmd.Dir = b.dir
	cmd.Env = append(os.Environ(), b.env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := os.Create(filepath.Join(b.dir, "batch.out"))
	require.NoError(t, err)
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out // a file: no copying goroutine
	require.NoError(t, cmd.Start())
	lines := func() []map[string]any {
		var got []map[string]any
		sc := bufio.NewScanner(strings.NewReader(mustRead(t, out.Name())))
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil && m["type"] == "task_result" {
				got = append(got, m)
			}
		}
		return got
	}
	require.Eventually(t, func() bool { return ready(lines(), b.prompted(t)) }, 60*time.Second, 10*time.Millisecond,
		"the batch never reached the point of the kill: %s", mustRead(t, out.Name()))
	require.NoError(t, syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL))
	_ = cmd.Wait()
	return lines()
}

// resume runs batch --resume on the journal and returns its task_result
// lines by id, its batch_result line and its exit status.
func (b journalBatch) resume(t *testing.T) (map[string]map[string]any, []map[string]any, map[string]any, int) {
	t.Helper()
	stdout, stderr, code := runEnv(t, t.TempDir(), b.env, "batch", "--resume", b.journal)
	byID := map[string]map[string]any{}
	var order []map[string]any
	var summary map[string]any
	for l := range strings.SplitSeq(strings.TrimSpace(stdout), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), "stdout: %s\nstderr: %s", stdout, stderr)
		switch m["type"] {
		case "task_result":
			id, _ := m["id"].(string)
			require.NotContains(t, byID, id, "one line per task")
			byID[id] = m
			order = append(order, m)
		case "batch_result":
			summary = m
		}
	}
	return byID, order, summary, code
}

// reply is a line's turn n's reply.
func reply(t *testing.T, line map[string]any, n int) string {
	t.Helper()
	turns, _ := line["turn_results"].([]any)
	require.Greater(t, len(turns), n-1, "%v", line)
	turn, _ := turns[n-1].(map[string]any)
	s, _ := turn["reply"].(string)
	return s
}

// TestBatchJournalResume: a journaled batch of six tasks, quick and slow,
// SIGKILLed once a task finished and a slow one is under way; batch
// --resume then prints exactly one task_result per task (a task finished
// before the kill: its line again, identical), every task completed,
// every prompt reached a runtime exactly once, and no holder or runtime
// is left (docs/behaviour.md#batch-journal).
func TestBatchJournalResume(t *testing.T) {
	t.Parallel()
	prompts := map[string]string{"q1": "quick one", "s1": "#slow s1", "s2": "#slow s2", "q2": "quick two", "s3": "#slow s3", "q3": "quick three"}
	ids := []string{"q1", "s1", "s2", "q2", "s3", "q3"}
	var tasks []string
	for _, id := range ids {
		raw, err := json.Marshal(map[string]string{"id": id, "prompt": prompts[id]})
		require.NoError(t, err)
		tasks = append(tasks, string(raw))
	}
	b := newJournalBatch(t, "batch-journal", tasks)
	before := b.killAfter(t, func(lines []map[string]any, got map[string]int) bool {
		return len(lines) > 0 && got["#slow s1"] > 0
	}, "--parallel", "2")
	t.Logf("finished before the kill: %d; prompts received: %v", len(before), b.prompted(t))

	byID, order, summary, code := b.resume(t)
	require.Equal(t, 0, code, "%v", order)
	require.Len(t, order, len(ids), "exactly one line per task")
	for _, line := range before {
		id, _ := line["id"].(string)
		assert.Equal(t, line, byID[id], "a task finished before the kill: its line again")
	}
	for _, id := range ids {
		line := byID[id]
		require.NotNil(t, line, id)
		assert.Equal(t, true, line["completed"], "%s: %v", id, line)
		want := prompts[id]
		if strings.HasPrefix(want, "#slow") {
			want = "one two three"
		}
		assert.Equal(t, want, reply(t, line, 1), id)
	}
	assert.Equal(t, float64(len(ids)), summary["completed"])

	got := b.prompted(t)
	for _, id := range ids {
		assert.Equal(t, 1, got[prompts[id]], "task %s's prompt reached a runtime once", id)
	}
	proctest.WaitCmdlineGone(t, b.marker, 30*time.Second)
	proctest.WaitCmdlineGone(t, strings.TrimPrefix(b.env[0], "XDG_RUNTIME_DIR="), 30*time.Second)

	// Resumed again: every task is finished, nothing runs, the same lines.
	again, _, _, code := b.resume(t)
	assert.Equal(t, 0, code)
	assert.Equal(t, byID, again)
	assert.Equal(t, got, b.prompted(t), "no prompt sent by a resume of a finished batch")
}

// TestBatchJournalResumeSendsNoLaterPrompt: a task of two prompts whose
// batch died during its first turn: the resumed batch follows that turn
// to its end, does not send the second prompt, and says so in the task's
// line (port_exit; docs/behaviour.md#batch-journal).
func TestBatchJournalResumeSendsNoLaterPrompt(t *testing.T) {
	t.Parallel()
	b := newJournalBatch(t, "batch-journal-multi", []string{`{"id":"m","prompts":["#slow first","second"]}`})
	b.killAfter(t, func(_ []map[string]any, got map[string]int) bool { return got["#slow first"] > 0 })

	byID, order, _, code := b.resume(t)
	require.Len(t, order, 1)
	line := byID["m"]
	got := b.prompted(t)
	assert.Equal(t, 1, got["#slow first"], "the first prompt was sent once")
	if got["second"] > 0 {
		// The kill came after the first turn ended and the second prompt
		// was sent: the resumed batch continued that turn.
		t.Log("the kill came during the second turn")
		assert.Equal(t, 1, got["second"])
		assert.Equal(t, true, line["completed"], "%v", line)
		return
	}
	assert.Equal(t, 1, code)
	assert.Equal(t, false, line["completed"], "%v", line)
	assert.Equal(t, "port_exit", line["error_kind"])
	assert.Equal(t, "the batch was resumed after turn 1 of 2 was sent: a resumed task continues only the turn under way, so prompts 2 to 2 were not sent", line["message"])
	assert.Equal(t, "one two three", reply(t, line, 1), "the turn under way was followed to its end")
	proctest.WaitCmdlineGone(t, b.marker, 30*time.Second)
	proctest.WaitCmdlineGone(t, strings.TrimPrefix(b.env[0], "XDG_RUNTIME_DIR="), 30*time.Second)
}

// TestBatchJournalRefusals: what --journal and --resume refuse, before
// anything starts (configuration_invalid, exit 2;
// docs/behaviour.md#batch-journal).
func TestBatchJournalRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tasks.jsonl"), []byte(`{"id":"a","prompt":"hi"}`+"\n"), 0o600))
	journal := filepath.Join(dir, "journal")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"resume with a TASKS file", []string{"--resume", journal, "tasks.jsonl"}, "configuration_invalid: --resume takes the tasks from its journal: give no TASKS file"},
		{"resume with flags", []string{"--resume", journal, "--parallel", "2"}, "configuration_invalid: --resume takes the batch's flags from its journal: give --resume DIR alone"},
		{"journal with a URL", []string{"--journal", journal, "--url", "tcp://127.0.0.1:1", "tasks.jsonl"}, "configuration_invalid: --journal and --url are exclusive"},
		{"journal over SSH", []string{"--journal", journal, "--ssh-host", "build1", "tasks.jsonl"}, "configuration_invalid: --journal over SSH is not built yet"},
		{"journal with shared processes", []string{"--journal", journal, "--sessions-per-process", "2", "tasks.jsonl"}, "configuration_invalid: --journal and --sessions-per-process above 1 are exclusive"},
		{"resume of no journal", []string{"--resume", journal}, "no batch's journal there"},
	} {
		stdout, stderr, code := runEnv(t, dir, nil, append([]string{"batch"}, c.args...)...)
		assert.Equal(t, 2, code, c.name)
		assert.Empty(t, stdout, c.name)
		assert.Contains(t, stderr, c.want, c.name)
	}
	_, err := os.Stat(journal)
	assert.True(t, os.IsNotExist(err), "nothing refused made a journal")
}

// TestBatchJournalLocked: one batch at a time runs a journal's tasks: a
// resume while the journal's lock is held is refused, exit 2; once it is
// released the resume prints the finished batch's line again
// (docs/behaviour.md#batch-journal).
func TestBatchJournalLocked(t *testing.T) {
	t.Parallel()
	b := newJournalBatch(t, "batch-journal-lock", []string{`{"id":"a","prompt":"hello"}`})
	stdout, stderr, code := runEnv(t, b.dir, b.env, "batch", "--json", "--journal", b.journal, "--command", b.command(t), "tasks.jsonl")
	require.Equal(t, 0, code, stderr)
	first := strings.SplitN(stdout, "\n", 2)[0]

	lock, err := os.OpenFile(filepath.Join(b.journal, "lock"), os.O_RDWR, 0)
	require.NoError(t, err)
	require.NoError(t, syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB))
	_, stderr, code = runEnv(t, b.dir, b.env, "batch", "--resume", b.journal)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "a batch of this journal is still running")
	require.NoError(t, lock.Close())

	stdout, stderr, code = runEnv(t, b.dir, b.env, "batch", "--resume", b.journal)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, first, strings.SplitN(stdout, "\n", 2)[0])
	assert.Equal(t, 1, b.prompted(t)["hello"])
}
