//go:build linux

package main_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
)

// openPTY opens a pseudo-terminal pair: the master the test reads, the
// slave the CLI writes to as its terminal.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	fd := int(m.Fd())
	require.NoError(t, unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0))
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	require.NoError(t, err)
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	return m, s
}

// liveTurn is a turn with a thought, a plan, a tool that runs for a
// while, then the reply.
const liveTurn = `{"name":"live","defaultTurn":"live","turns":{"live":{"steps":[
 {"step":"thought","text":"The tests are slow; run them once."},
 {"step":"plan","entries":[{"content":"Read the task","status":"completed"},{"content":"Run the tests","status":"in_progress"},{"content":"Report","status":"pending"}]},
 {"step":"toolCall","toolCallId":"t-1","title":"go test ./...","kind":"execute","status":"in_progress"},
 {"step":"sleep","ms":300},
 {"step":"toolCallUpdate","toolCallId":"t-1","status":"completed"},
 {"step":"text","text":"All tests pass."},
 {"step":"stop","stopReason":"end_turn"}]}}}`

// runOnTerminal runs the CLI with its stdout and stderr on a
// pseudo-terminal and returns all a person's terminal showed.
func runOnTerminal(t *testing.T, env []string, args ...string) string {
	t.Helper()
	screen, code := runOnTerminalCode(t, env, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, screen)
	}
	return screen
}

// runOnTerminalCode is runOnTerminal, with the exit status returned.
func runOnTerminalCode(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	master, slave := openPTY(t)
	defer master.Close()
	cmd := exec.Command(testbin.Path(t), args...)
	cmd.Dir = t.TempDir()
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = slave, slave
	require.NoError(t, cmd.Start())
	slave.Close()
	var out bytes.Buffer
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			out.Write(buf[:n])
			if err != nil {
				return // EIO once the CLI closed its terminal
			}
		}
	}()
	err := cmd.Wait()
	wg.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out.String(), ee.ExitCode()
	}
	require.NoError(t, err)
	return out.String(), 0
}

func envWithout(names ...string) []string {
	var out []string
	for _, e := range os.Environ() {
		keep := true
		for _, n := range names {
			keep = keep && !strings.HasPrefix(e, n+"=")
		}
		if keep {
			out = append(out, e)
		}
	}
	return out
}

var sgrRE = regexp.MustCompile("\x1b\\[[0-9;]*m")

// TestLiveViewOnATerminal records, under a pseudo-terminal, a turn with a
// thought, a plan, a running tool and a reply: each is shown as it
// happens, in this order, in colour; with NO_COLOR the same without
// colour; and none of the live view reaches a pipe.
func TestLiveViewOnATerminal(t *testing.T) {
	script := filepath.Join(t.TempDir(), "live.json")
	require.NoError(t, os.WriteFile(script, []byte(liveTurn), 0o600))
	agent := testbin.Path(t) + " agent --script " + script
	args := []string{"run", "--command", agent, "fix the tests", "and again"}

	screen := runOnTerminal(t, append(envWithout("NO_COLOR", "TERM"), "TERM=xterm"), args...)
	plain := sgrRE.ReplaceAllString(screen, "")
	order := []string{
		"▶ turn 1: fix the tests",
		"· thought: The tests are slow; run them once.",
		"· plan (1 of 3 done):",
		"  ✓ Read the task",
		"  ▸ Run the tests",
		"  ○ Report",
		"⚙ execute: go test ./... (", // the status line while the tool runs
		"⚙ execute ok (",
		"All tests pass.",
		"── turn 1: turn_completed (stop reason end_turn) in ",
		", 1 tool call;",
		"▶ turn 2: and again", // the second prompt has its header
		"── turn 2: turn_completed",
		"session ref-1",
	}
	at := 0
	for _, want := range order {
		i := strings.Index(plain[at:], want)
		require.GreaterOrEqual(t, i, 0, "%q after offset %d in:\n%s", want, at, plain)
		at += i + len(want)
	}
	assert.Contains(t, screen, "\x1b[2m· thought: ", "the thought is dim")
	assert.Contains(t, screen, "\x1b[32m── turn 1: turn_completed", "a completed turn is green")
	assert.Contains(t, screen, "\x1b[1;36m▶ turn 2: and again", "a header is bold cyan")
	assert.Contains(t, screen, "\x1b[32mok\x1b[0m")

	screen = runOnTerminal(t, append(envWithout("NO_COLOR", "TERM"), "TERM=xterm", "NO_COLOR=1"), args...)
	assert.Empty(t, sgrRE.FindAllString(screen, -1), "NO_COLOR: no colour")
	assert.Contains(t, screen, "⚙ execute: go test ./... (", "NO_COLOR keeps the live view")
	assert.Contains(t, screen, "▶ turn 2: and again")

	stdout, _, code := runIn(t, t.TempDir(), args...)
	require.Equal(t, 0, code)
	assert.Empty(t, sgrRE.FindAllString(stdout, -1), "no colour into a pipe")
	assert.NotContains(t, stdout, "▶ turn", "no header into a pipe")
	assert.Contains(t, stdout, "· thought: The tests are slow; run them once.\n· plan (1 of 3 done):\n  ✓ Read the task\n  ▸ Run the tests\n  ○ Report\n")
}

// TestBatchTableOnATerminal: on a terminal, batch draws a live table of
// its tasks and redraws it in place (the cursor goes back up over the
// lines drawn last); the final table shows every task's state, tokens and
// cost, coloured, with the failed tasks' messages under it; with NO_COLOR
// the same without colour (docs/behaviour.md#batch).
func TestBatchTableOnATerminal(t *testing.T) {
	dir := t.TempDir()
	tasks := writeTasks(t, dir,
		`{"id":"a","prompt":"alpha"}`,
		`{"id":"b","prompt":"`+usagePrompt+`"}`,
		`{"id":"c","prompt":"#prompt-error"}`)
	args := []string{"batch", "--sessions-per-process", "2", "--command", testbin.Path(t) + " agent --scenario multi-session", tasks}

	screen, code := runOnTerminalCode(t, append(envWithout("NO_COLOR", "TERM"), "TERM=xterm"), args...)
	require.Equal(t, 1, code, screen)
	const up = "\x1b[5A" // the heading, three rows and the count
	last := strings.LastIndex(screen, up)
	require.GreaterOrEqual(t, last, 0, "the table is redrawn in place:\n%q", screen)
	assert.Less(t, strings.Index(screen, "TASK"), last, "a table was drawn before the last one")
	final := plainLines(screen[last+len(up):])
	require.GreaterOrEqual(t, len(final), 6, "%q", final)
	assert.Regexp(t, `^TASK +HOST +STATE +TURN +TOKENS +COST +ELAPSED$`, final[0])
	assert.Regexp(t, `^a +local +completed +1/1 +- +- +\S+$`, final[1])
	assert.Regexp(t, `^b +local +completed +1/1 +15 +0\.2500 USD +\S+$`, final[2])
	assert.Regexp(t, `^c +local +failed +1/1 +- +- +\S+$`, final[3])
	assert.Equal(t, "3 tasks: 2 completed, 1 failed", final[4])
	assert.Regexp(t, `^task c: failed: session/prompt error -32603: Internal error: scripted failure \(1 turn, session ref-[0-9]+\)$`, final[5])
	assert.Contains(t, screen, "\x1b[32mcompleted\x1b[0m", "a completed task is green")
	assert.Contains(t, screen, "\x1b[31mfailed\x1b[0m", "a failed task is red")

	screen, code = runOnTerminalCode(t, append(envWithout("NO_COLOR", "TERM"), "TERM=xterm", "NO_COLOR=1"), args...)
	require.Equal(t, 1, code, screen)
	assert.Empty(t, sgrRE.FindAllString(screen, -1), "NO_COLOR: no colour")
	assert.Contains(t, screen, up, "NO_COLOR keeps the live table")
}

// plainLines splits what a terminal was sent into lines, without the
// carriage returns, line clears, erasures and colours.
func plainLines(s string) []string {
	s = sgrRE.ReplaceAllString(s, "")
	s = strings.NewReplacer("\r", "", "\x1b[2K", "", "\x1b[J", "").Replace(s)
	var out []string
	for l := range strings.SplitSeq(s, "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}
