//go:build unix

package main_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/internal/testsupport/sshtest"
	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
)

// runEnv runs the CLI in dir with env added to its environment (and no
// ssh-agent, so the native transport authenticates with the config's key).
func runEnv(t *testing.T, dir string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(testbin.Path(t), args...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SSH_AUTH_SOCK=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
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

// runResult returns the run_result line of a --json run.
func runResult(t *testing.T, stdout string) map[string]any {
	t.Helper()
	for l := range strings.SplitSeq(stdout, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["type"] == "run_result" {
			return m
		}
	}
	t.Fatalf("no run_result line in:\n%s", stdout)
	return nil
}

// TestRunFailsOverOntoALiveHost: with hosts [down, live] behind a real
// sshd, both transports skip the closed port, run the reference agent on
// the second host, and name it in run_result and the human summary.
func TestRunFailsOverOntoALiveHost(t *testing.T) {
	srv := sshtest.Start(t)
	agent := srv.Install(t, testbin.Path(t), "acpdrive")
	for _, transport := range []string{"openssh", "native"} {
		t.Run(transport, func(t *testing.T) {
			args := []string{"run", "--command", agent + " agent",
				"--ssh-host", srv.DownAlias, "--ssh-host", srv.Alias,
				"--ssh-config", srv.ConfigFile, "--ssh-transport", transport,
				"--workspace", srv.Workspace}

			stdout, stderr, code := runEnv(t, t.TempDir(), nil, append(args, "--json", "hello", "again")...)
			require.Equal(t, 0, code, "stdout: %s\nstderr: %s", stdout, stderr)
			res := runResult(t, stdout)
			assert.Equal(t, srv.Alias, res["host"], "run_result: %v", res)
			assert.Equal(t, float64(2), res["turns"], "run_result: %v", res)

			stdout, stderr, code = runEnv(t, t.TempDir(), nil, append(args, "hello")...)
			require.Equal(t, 0, code, "stdout: %s\nstderr: %s", stdout, stderr)
			assert.Contains(t, stdout, " on "+srv.Alias, "summary: %s", stdout)
			assert.NotContains(t, stdout, " on "+srv.DownAlias)
		})
	}
	if left := srv.WaitNoRemoteProcs(t, 10*time.Second); len(left) > 0 {
		t.Errorf("remote processes left: %v", left)
	}
}

// passEnvSecret is a value only worker.ssh_pass_env carries.
const passEnvSecret = "acpd-preamble-value-5f3c91e7"

// TestRunNeverLogsPassEnvValues: at --log-level debug, the values
// worker.ssh_pass_env forwards appear in no log record (the names may),
// on either transport; the runtime still receives them.
func TestRunNeverLogsPassEnvValues(t *testing.T) {
	srv := sshtest.Start(t)
	agent := srv.Install(t, testbin.Path(t), "acpdrive")
	envDump := filepath.Join(srv.BinDir, "cli-envdump.sh")
	require.NoError(t, os.WriteFile(envDump, []byte("#!/bin/sh\nprintf '%s' \"$ACPD_SECRET\" > "+
		srv.Workspace+"/cli-secret.out\nexec "+agent+" agent\n"), 0o755))
	require.NoError(t, os.Chmod(envDump, 0o755))
	for _, transport := range []string{"openssh", "native"} {
		t.Run(transport, func(t *testing.T) {
			srv.Exec(t, "rm -f "+srv.Workspace+"/cli-secret.out")
			dir := t.TempDir()
			path := writeWorkflow(t, dir, "WORKFLOW.md",
				"agent:",
				"  kind: agent-client-protocol",
				"  command: "+envDump,
				"worker:",
				"  ssh_hosts: [\""+srv.Alias+"\"]",
				"  ssh_pass_env: [ACPD_SECRET]",
				"  ssh_config: "+srv.ConfigFile,
			)
			stdout, stderr, code := runEnv(t, dir, []string{"ACPD_SECRET=" + passEnvSecret},
				"run", "--workflow", path, "--ssh-transport", transport, "--workspace", srv.Workspace,
				"--log-level", "debug", "--json", "hello")
			require.Equal(t, 0, code, "stdout: %s\nstderr: %s", stdout, stderr)
			assert.NotEmpty(t, stderr, "no log records at debug")
			assert.NotContains(t, stderr, passEnvSecret)
			assert.NotContains(t, stdout, passEnvSecret)
			assert.Equal(t, passEnvSecret, srv.Exec(t, "cat "+srv.Workspace+"/cli-secret.out"), "the runtime did not receive the value")
		})
	}
}

// TestRunOutputSchemaOverSSH: an SSH launch declares no stdio server, so
// the result tool is not there (the agent's call finds no server) and the
// result comes from the reply (docs/behaviour.md#structured-results).
func TestRunOutputSchemaOverSSH(t *testing.T) {
	srv := sshtest.Start(t)
	agent := srv.Install(t, testbin.Path(t), "acpdrive")
	script := filepath.Join(srv.Workspace, "result-script.json")
	require.NoError(t, os.WriteFile(script, []byte(`{"defaultTurn":"fix","turns":{"fix":{"steps":[
 {"step":"mcpCall","mcpServer":"acpdrive-result","mcpTool":"submit_result","mcpArguments":{"done":true}},
 {"step":"text","text":"Done.\n`+"```json"+`\n{\"done\": true}\n`+"```"+`\n"},{"step":"stop","stopReason":"end_turn"}]}}}`), 0o644))
	schema := filepath.Join(t.TempDir(), "schema.json")
	require.NoError(t, os.WriteFile(schema, []byte(`{"type":"object","properties":{"done":{"type":"boolean"}},"required":["done"]}`), 0o600))
	stdout, stderr, code := runEnv(t, t.TempDir(), nil, "run", "--command", agent+" agent --script "+script,
		"--ssh-host", srv.Alias, "--ssh-config", srv.ConfigFile, "--workspace", srv.Workspace,
		"--output-schema", schema, "--json", "go")
	require.Equal(t, 0, code, "stdout: %s\nstderr: %s", stdout, stderr)
	assert.Contains(t, stdout, `"result":{"done":true},"result_source":"reply"`)
	assert.Contains(t, stdout, "no stdio MCP server named acpdrive-result was declared")
	assert.Equal(t, map[string]any{"done": true}, runResult(t, stdout)["result"])
}
