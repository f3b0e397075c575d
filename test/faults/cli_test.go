//go:build unix

package faults

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
)

// cliLine is any JSON line `acpdrive run --json` prints.
type cliLine struct {
	Type      string `json:"type"`
	ErrorKind string `json:"error_kind"`
	Message   string `json:"message"`
	Outcome   string `json:"outcome"`
	SessionID string `json:"session_id"`
	AgentPID  int    `json:"agent_pid"`
	Turns     *int   `json:"turns"`
	Survivors []struct {
		PID int `json:"pid"`
	} `json:"survivors"`
}

// quoteWord quotes s for the CLI's shell-like --command splitting.
func quoteWord(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func commandLine(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = quoteWord(w)
	}
	return strings.Join(q, " ")
}

// cliCmd prepares `acpdrive run --json` on a hostile runtime in dir.
func cliCmd(t *testing.T, dir, command string, extra ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	args := append([]string{"run", "--json", "--read-timeout", readTimeout.String(), "--stop-grace", stopGrace.String(),
		"--workspace", dir, "--command", command}, extra...)
	cmd := exec.Command(testbin.Path(t), args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	return cmd, &stdout, &stderr
}

func exitCode(t *testing.T, err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	t.Fatalf("run: %v", err)
	return -1
}

func parseCLI(t *testing.T, out string) []cliLine {
	var lines []cliLine
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if !strings.HasPrefix(sc.Text(), "{") {
			continue
		}
		var l cliLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		lines = append(lines, l)
	}
	return lines
}

func lastOf(lines []cliLine, typ string) *cliLine {
	for i := len(lines) - 1; i >= 0; i-- {
		if lines[i].Type == typ {
			return &lines[i]
		}
	}
	return nil
}

func TestCLI(t *testing.T) {
	testbin.Path(t) // build once, before the parallel runs
	tests := []struct {
		name      string
		behaviour []string
		prompts   []string
		command   string // overrides behaviour when set
		code      int
		check     func(t *testing.T, lines []cliLine, stderr string)
	}{
		{name: "exit-0-every-turn-completed", behaviour: []string{"echo"}, prompts: []string{"a", "b"}, code: 0,
			check: func(t *testing.T, lines []cliLine, _ string) {
				rr := lastOf(lines, "run_result")
				if rr == nil || rr.SessionID != "s1" || rr.Turns == nil || *rr.Turns != 2 || rr.AgentPID == 0 || len(rr.Survivors) != 0 {
					t.Errorf("run_result %+v; want session s1, 2 turns, a PID, no survivors", rr)
				}
			}},
		{name: "exit-1-turn-failed", behaviour: []string{"stop-reason", `"max_tokens"`}, prompts: []string{"a", "b"}, code: 1,
			check: func(t *testing.T, lines []cliLine, _ string) {
				tr := lastOf(lines, "turn_result")
				if tr == nil || tr.ErrorKind != "turn_token_limit" {
					t.Errorf("turn_result %+v; want turn_token_limit", tr)
				}
				if rr := lastOf(lines, "run_result"); rr == nil || rr.Turns == nil || *rr.Turns != 1 {
					t.Errorf("run_result %+v; want 1 turn (no turn after the failed one)", rr)
				}
			}},
		{name: "exit-4-turn-refused", behaviour: []string{"stop-reason", `"refusal"`}, prompts: []string{"a", "b"}, code: 4,
			check: func(t *testing.T, lines []cliLine, _ string) {
				tr := lastOf(lines, "turn_result")
				if tr == nil || tr.ErrorKind != "turn_refused" {
					t.Errorf("turn_result %+v; want turn_refused", tr)
				}
				if rr := lastOf(lines, "run_result"); rr == nil || rr.Turns == nil || *rr.Turns != 1 {
					t.Errorf("run_result %+v; want 1 turn (no turn after the failed one)", rr)
				}
			}},
		{name: "exit-2-empty-command", command: " ", prompts: []string{"a"}, code: 2},
		{name: "exit-3-crash-before-initialize", behaviour: []string{"exit", "3", "no credential\n"}, prompts: []string{"a"}, code: 3,
			check: func(t *testing.T, lines []cliLine, _ string) {
				sf := lastOf(lines, "startup_failed")
				if sf == nil || sf.ErrorKind != "port_exit" || sf.Message != earlyExit+"exit status 3: no credential" {
					t.Errorf("startup_failed %+v", sf)
				}
			}},
		{name: "exit-3-command-not-on-path", command: "acpdrive-faults-no-such-program", prompts: []string{"a"}, code: 3,
			check: func(t *testing.T, lines []cliLine, _ string) {
				sf := lastOf(lines, "startup_failed")
				if sf == nil || sf.ErrorKind != "agent_not_found" || sf.Message != `agent command "acpdrive-faults-no-such-program" was not found on PATH` {
					t.Errorf("startup_failed %+v", sf)
				}
			}},
		{name: "shell-metacharacters-split-not-run", command: "", behaviour: nil, prompts: []string{"a"}, code: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			command := tt.command
			if command == "" && tt.behaviour != nil {
				command = commandLine(hostileCommand(t, tt.behaviour[0], tt.behaviour[1:]...))
			}
			var wantArgv []string
			if tt.name == "shell-metacharacters-split-not-run" {
				command = commandLine(hostileCommand(t, "argv-echo")) + ` '$(touch pwned)' "a;b" \| '*' 'x y' "\$HOME" '>out'`
				wantArgv = []string{"$(touch pwned)", "a;b", "|", "*", "x y", "$HOME", ">out"}
			}
			cmd, stdout, stderr := cliCmd(t, dir, command, tt.prompts...)
			code := exitCode(t, cmd.Run())
			if code != tt.code {
				t.Fatalf("exit %d; want %d\nstdout: %s\nstderr: %s", code, tt.code, stdout, stderr)
			}
			lines := parseCLI(t, stdout.String())
			if tt.check != nil {
				tt.check(t, lines, stderr.String())
			}
			if wantArgv != nil {
				rig := &rig{dir: dir}
				var got []string
				if rep := rig.report()["argv"]; len(rep) == 1 {
					_ = json.Unmarshal([]byte(rep[0]), &got)
				}
				if strings.Join(got, "\x00") != strings.Join(wantArgv, "\x00") {
					t.Errorf("argv %q; want %q", got, wantArgv)
				}
			}
			waitGone(t, readPIDs(dir), 5*time.Second)
		})
	}

	t.Run("sigint-during-start-up-exit-3", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		cmd, stdout, stderr := cliCmd(t, dir, commandLine(hostileCommand(t, "hang-init")), "a")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		rig := &rig{dir: dir}
		waitFor(t, "initialize to reach the runtime", 10*time.Second, func() bool { return len(rig.report()["initialize"]) > 0 })
		begin := time.Now()
		_ = cmd.Process.Signal(syscall.SIGINT)
		code := exitCode(t, cmd.Wait())
		elapsed := time.Since(begin)
		if code != 3 {
			t.Errorf("exit %d; want 3\nstdout: %s\nstderr: %s", code, stdout, stderr)
		}
		within(t, "exit after SIGINT", elapsed, stopGrace+time.Second)
		sf := lastOf(parseCLI(t, stdout.String()), "startup_failed")
		if sf == nil || sf.ErrorKind != "turn_cancelled" || sf.Message != startCancelled {
			t.Errorf("startup_failed %+v; want turn_cancelled %q", sf, startCancelled)
		}
		waitGone(t, readPIDs(dir), 5*time.Second)
	})
}
