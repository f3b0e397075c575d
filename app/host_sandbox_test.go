//go:build linux

package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/eventrec"
	"github.com/acpdrive/acpdrive/refagent"
)

// sharedSandboxScript is a script of a runtime that can share its process
// (it advertises session/close) and whose turn "write" writes the file its
// argument names.
func sharedSandboxScript(t *testing.T, dir string) string {
	t.Helper()
	s := refagent.Script{
		Name: "shared-sandbox",
		Initialize: &refagent.Initialize{AgentCapabilities: json.RawMessage(
			`{"loadSession":false,"promptCapabilities":{},"mcpCapabilities":{"http":false,"sse":false},"sessionCapabilities":{"close":{}}}`)},
		Turns: map[string]*refagent.Turn{
			"write": {Steps: []refagent.Step{
				{Step: refagent.StepWriteFile, FromArgument: true, Text: "written"},
				{Step: refagent.StepStop},
			}},
		},
	}
	data, err := json.Marshal(s)
	require.NoError(t, err)
	path := filepath.Join(dir, "shared-sandbox.json")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	return path
}

// TestHostSandboxHonoured: a sandboxed host confines the sessions it
// carries (a write outside the workspace fails, one inside is made); a
// session that asks for the host's own sandbox is taken, and one that asks
// for none on that host, or names a directory the host's sandbox does not
// make writable, is refused rather than run otherwise than asked
// (docs/behaviour.md#runtime-host).
func TestHostSandboxHonoured(t *testing.T) {
	requireBwrap(t)
	logDir := t.TempDir()
	o, _, _, _ := procOptions(t, []string{"--script", sharedSandboxScript(t, logDir)})
	o.Settings.Command[3] = filepath.Join(logDir, "agent.log") // --log, writable below
	o.Settings.Sandbox = domain.Sandbox{Enabled: true, Writable: []string{logDir}}
	h, err := app.NewHost(o, app.HostOptions{})
	require.NoError(t, err)
	defer func() { assert.NoError(t, h.Close(context.Background())) }()

	for name, set := range map[string]func(*app.Options){
		"Settings.Sandbox":                       func(so *app.Options) { so.Settings.Sandbox = domain.Sandbox{Network: domain.SandboxNetNone} },
		"Settings.Session.AdditionalDirectories": func(so *app.Options) { so.Settings.Session.AdditionalDirectories = []string{t.TempDir()} },
	} {
		so := o
		set(&so)
		_, err := h.Start(context.Background(), so)
		var oe *app.OptionsError
		require.True(t, errors.As(err, &oe), "%s: an *OptionsError, got %v", name, err)
		assert.Equal(t, name, oe.Field)
	}

	rec := &eventrec.Recorder{}
	so := o
	so.OnEvent, so.OnAgentText = rec.Add, rec.AddText
	sess, err := h.Start(context.Background(), so)
	require.NoError(t, err)
	outside := filepath.Join(t.TempDir(), "outside.txt")
	res := sess.Turn(context.Background(), "#write "+outside)
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.Contains(t, rec.Text(), "writeFile "+outside+": error")
	assert.NoFileExists(t, outside, "a write outside the workspace was made")
	inside := filepath.Join(o.Workspace, "inside.txt")
	res = sess.Turn(context.Background(), "#write "+inside)
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.FileExists(t, inside)
	require.NoError(t, sess.Stop(context.Background()))
}
