package main_test

import (
	"bufio"
	"encoding/json"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
)

// TestRunFlagsAfterPrompts checks that flags are taken anywhere on the
// command line and that "--" ends them.
func TestRunFlagsAfterPrompts(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		prompts []string // the user chunks the reference agent echoes, in order
	}{
		{"flag after the prompt", []string{"run", "hello", "--json"}, []string{"hello"}},
		{"valued flag after the prompt", []string{"run", "one", "--read-timeout", "3s", "two", "--json"}, []string{"one", "two"}},
		{"flag=value form", []string{"run", "--json", "one", "--stop-grace=2s"}, []string{"one"}},
		{"-- ends the flags", []string{"run", "--json", "--", "--json", "-x"}, []string{"--json", "-x"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lines, stderr, code := run(t, c.args...)
			require.Equal(t, 0, code, stderr)
			results := ofType(lines, "turn_result")
			require.Len(t, results, len(c.prompts), "one turn per prompt: %v", c.prompts)
			last := lines[len(lines)-1]
			assert.Equal(t, "run_result", last.Type)
			assert.Equal(t, len(c.prompts), last.Turns)
		})
	}
}

func TestRunCommandEmptyIsAUsageError(t *testing.T) {
	for _, cmd := range []string{"", "   "} {
		_, stderr, code := run(t, "run", "--command", cmd, "hello")
		assert.Equal(t, 2, code)
		assert.Contains(t, stderr, "--command: the command is empty")
	}
}

// TestRunSIGINTDuringStartupCancelsAtOnce starts a runtime that never
// answers initialize (whose bound is 60 s) and interrupts the start.
func TestRunSIGINTDuringStartupCancelsAtOnce(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			command := testbin.Path(t) + " agent --scenario hang-init"
			cmd := exec.Command(testbin.Path(t), "run", "--json", "--log-level", "info", "--command", command, "hello")
			cmd.Dir = t.TempDir()
			stderr, err := cmd.StderrPipe()
			require.NoError(t, err)
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			// The process-started record says initialize is under way.
			sc := bufio.NewScanner(stderr)
			for sc.Scan() && !strings.Contains(sc.Text(), "agent process started") {
			}
			require.NoError(t, cmd.Process.Signal(sig))
			go func() {
				for sc.Scan() {
				}
			}()
			var lines []line
			out := bufio.NewScanner(stdout)
			for out.Scan() {
				var l line
				require.NoError(t, json.Unmarshal(out.Bytes(), &l), out.Text())
				lines = append(lines, l)
			}
			_ = cmd.Wait()
			assert.Equal(t, 3, cmd.ProcessState.ExitCode())
			failed := ofType(lines, "startup_failed")
			require.Len(t, failed, 1, "lines: %+v", lines)
			assert.Equal(t, "turn_cancelled", failed[0].ErrorKind)
		})
	}
}

func TestRunLaunchesARemoteConfigurationOverSSH(t *testing.T) {
	dir := t.TempDir()
	path := writeWorkflow(t, dir, "WORKFLOW.md",
		"agent:",
		"  kind: agent-client-protocol",
		"  command: never-run-locally --acp",
		"worker:",
		"  ssh_hosts: [\"127.0.0.1:1\", \"127.0.0.1:2\"]",
		"  ssh_config: /dev/null",
	)
	stdout, stderr, code := runIn(t, dir, "run", "--json", "--workflow", path, "hello")
	// Nothing listens on either port: ssh exits 255 on both hosts and the
	// runtime is never run locally instead.
	assert.Equal(t, 3, code, "stderr: %s", stderr)
	assert.Contains(t, stdout, "exit status 255")
	assert.NotContains(t, stdout, "never-run-locally")

	// The native transport fails over the same way: nothing answers on
	// either port, so both are tried and the start fails.
	stdout, stderr, code = runIn(t, dir, "run", "--json", "--workflow", path, "--ssh-transport", "native", "hello")
	assert.Equal(t, 3, code, "stderr: %s", stderr)
	assert.Contains(t, stdout, "ssh connection failed")
	assert.NotContains(t, stdout, "never-run-locally")

	_, stderr, code = runIn(t, dir, "run", "--workflow", path, "--ssh-transport", "telnet", "hello")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `--ssh-transport "telnet": want openssh or native`)
}

// TestRunTokenCeilingUnmeasured: the reference agent is measured by no
// source, so a ceiling cannot bound the run; run_result says so and every
// turn still runs.
func TestRunTokenCeilingUnmeasured(t *testing.T) {
	lines, stderr, code := run(t, "run", "--json", "--max-tokens", "10", "one", "two")
	require.Equal(t, 0, code, stderr)
	require.Len(t, ofType(lines, "turn_result"), 2)
	var raw map[string]any
	last := lines[len(lines)-1]
	require.Equal(t, "run_result", last.Type)
	out, _, _ := runIn(t, t.TempDir(), "run", "--json", "--max-tokens", "10", "one")
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.Contains(l, `"run_result"`) {
			require.NoError(t, json.Unmarshal([]byte(l), &raw))
		}
	}
	assert.Equal(t, "run reported no token usage, token ceiling could not bound it", raw["notice"])
	assert.NotContains(t, raw, "usage", "an unmeasured run shows no figures, never zero")
	assert.EqualValues(t, 0, raw["measured_turns"])
}
