//go:build linux

package app_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/localexec"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/proctest"
	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
	"github.com/acpdrive/acpdrive/refagent"
)

// sandboxScript writes a reference-agent script whose turn "write" writes
// the file its argument names and whose turn "daemon" leaves a daemonized
// process behind, a shell whose command line carries token.
func sandboxScript(t *testing.T, dir, token string) string {
	t.Helper()
	s := refagent.Script{
		Name: "sandbox",
		Turns: map[string]*refagent.Turn{
			"write": {Steps: []refagent.Step{
				{Step: refagent.StepWriteFile, FromArgument: true, Text: "written"},
				{Step: refagent.StepStop},
			}},
			"daemon": {Steps: []refagent.Step{
				{Step: refagent.StepDaemon, Command: []string{"sh", "-c", "sleep 600; : " + token}},
				{Step: refagent.StepStop},
			}},
		},
	}
	data, err := json.Marshal(s)
	require.NoError(t, err)
	path := filepath.Join(dir, "sandbox.json")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	return path
}

func randomToken(t *testing.T) string {
	b := make([]byte, 8)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return "acpdrive-daemon-" + hex.EncodeToString(b)
}

// requireBwrap skips when this host has no bubblewrap; CI installs it.
func requireBwrap(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap (bwrap) is not installed")
	}
}

// TestSandboxConfinesRuntime: under the sandbox (docs/behaviour.md#sandbox)
// a real runtime process writes inside the workspace, cannot write
// outside it, and a process it daemonized does not survive Stop.
func TestSandboxConfinesRuntime(t *testing.T) {
	requireBwrap(t)
	token := randomToken(t)
	// The host's /tmp is hidden in the sandbox: the script and the log
	// are in a directory the session names writable.
	logDir := t.TempDir()
	o, rec, logs, agentLg := procOptions(t, []string{"--script", sandboxScript(t, logDir, token)})
	o.Settings.Command[3] = filepath.Join(logDir, "agent.log") // --log, writable below
	o.Settings.Sandbox = domain.Sandbox{Enabled: true, Writable: []string{logDir}}
	h := startWith(t, o, rec, logs, agentLg)
	t.Cleanup(func() {
		for _, pid := range proctest.WithCmdline(token) {
			_ = syscall.Kill(-pid, syscall.SIGKILL) // the daemon leads its own group
		}
	})

	outside := filepath.Join(t.TempDir(), "outside.txt")
	res := h.turn("#write " + outside)
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.Contains(t, h.rec.Text(), "writeFile "+outside+": error")
	assert.NoFileExists(t, outside, "a write outside the workspace was made")

	inside := filepath.Join(o.Workspace, "inside.txt")
	res = h.turn("#write " + inside)
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.Contains(t, h.rec.Text(), "writeFile "+inside+": ok")
	data, err := os.ReadFile(inside)
	require.NoError(t, err, "the write inside the workspace was not made")
	assert.Equal(t, "written", string(data))

	// /tmp is the sandbox's own: a write there is made, and stays there.
	private := "/tmp/" + token + ".txt"
	res = h.turn("#write " + private)
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.Contains(t, h.rec.Text(), "writeFile "+private+": ok")
	assert.NoFileExists(t, private, "the private temporary directory is the host's")

	res = h.turn("#daemon")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	h.waitText("daemon started")
	require.Eventually(t, func() bool { return len(proctest.WithCmdline(token)) > 0 },
		waitFor, 10*time.Millisecond, "the daemon never ran")

	h.stop()
	proctest.WaitCmdlineGone(t, token, waitFor)
}

// TestSandboxNeedsBwrap: a host without bubblewrap refuses a sandboxed
// start with agent_not_found and the install hint; nothing runs
// unconfined.
func TestSandboxNeedsBwrap(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	o, _, _, agentLg := procOptions(t, []string{"--scenario", "echo"})
	o.Settings.Sandbox = domain.Sandbox{Enabled: true}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sess, err := app.Start(ctx, o)
	if sess != nil {
		_ = sess.Stop(ctx)
	}
	require.Error(t, err)
	var ae *domain.AgentError
	require.True(t, errors.As(err, &ae), "%v", err)
	assert.Equal(t, domain.KindAgentNotFound, ae.Kind)
	assert.Contains(t, ae.Message, "bubblewrap")
	assert.Contains(t, ae.Message, "apt-get install bubblewrap")
	assert.NoFileExists(t, agentLg, "the runtime ran")
}

// TestSandboxKeepsToolServerBeacon: inside the sandbox, with no network,
// the runtime still starts its stdio MCP servers and the tool-server
// beacon still reaches acpdrive (docs/behaviour.md#sandbox).
func TestSandboxKeepsToolServerBeacon(t *testing.T) {
	requireBwrap(t)
	o, rec, logs := baseOptions(t, withConfirmation(time.Hour))
	so, starterLog := starterOptions(t, nil)
	o.Settings.Command, o.Launcher = so.Settings.Command, so.Launcher
	o.Settings.Sandbox = domain.Sandbox{Enabled: true, Network: domain.SandboxNetNone, Writable: []string{filepath.Dir(starterLog)}}
	h := startWith(t, o, rec, logs, "")
	caps := h.sess.Capabilities()
	assert.True(t, caps.Confirmed(domain.CapToolServers), logs.String())
	assert.Equal(t, "started "+domain.BeaconServerName+"\n", readFile(t, starterLog))
	res := h.turn("hello")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
}

// TestSandboxKeepsTheGrace: the teardown's SIGTERM reaches the sandboxed
// runtime, which ends on its own within the grace (here a runtime whose
// SIGTERM handler takes a second and leaves a mark); bubblewrap ignores
// it, so the sandbox does not take the runtime down first
// (docs/behaviour.md#sandbox).
func TestSandboxKeepsTheGrace(t *testing.T) {
	requireBwrap(t)
	dir := t.TempDir()
	scriptPath := filepath.Join(dir, "keep.json")
	require.NoError(t, os.WriteFile(scriptPath, []byte(`{"name":"keep","stdinEOF":"keepRunning"}`), 0o600))
	mark := filepath.Join(dir, "graceful")
	runtime := filepath.Join(dir, "runtime.sh")
	require.NoError(t, os.WriteFile(runtime, []byte("#!/bin/sh\n"+
		"exec 3<&0\n"+
		"trap 'sleep 1; echo graceful > "+mark+"; exit 0' TERM\n"+
		testbin.Path(t)+" agent --script "+scriptPath+" 0<&3 3<&- &\n"+
		"wait $!\nwait $!\n"), 0o755))
	o, rec, logs := baseOptions(t, withStopGrace(20*time.Second))
	o.Settings.Command = []string{runtime}
	o.Launcher = localexec.New(localexec.Options{})
	o.Settings.Sandbox = domain.Sandbox{Enabled: true, Writable: []string{dir}}
	h := startWith(t, o, rec, logs, "")
	h.stop()
	data, err := os.ReadFile(mark)
	require.NoError(t, err, "the runtime did not end on its own after SIGTERM:\n%s", logs.String())
	assert.Equal(t, "graceful\n", string(data))
	assert.NotContains(t, logs.String(), "force-terminated")
}
