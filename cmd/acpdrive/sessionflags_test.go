package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
	"github.com/acpdrive/acpdrive/refagent"
)

// postureLine is the part of run_result the session configuration fills.
type postureLine struct {
	Type   string            `json:"type"`
	Mode   string            `json:"mode"`
	Model  string            `json:"model"`
	Config map[string]string `json:"config"`
}

func lastPosture(t *testing.T, stdout string) postureLine {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	var p postureLine
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &p), stdout)
	require.Equal(t, "run_result", p.Type)
	return p
}

func TestRunSessionConfigFlags(t *testing.T) {
	bin := testbin.Path(t)
	dir := t.TempDir()
	agentLog := filepath.Join(dir, "agent.log")
	promptFile := filepath.Join(dir, "prompt.txt")
	require.NoError(t, os.WriteFile(promptFile, []byte("FROM-A-FILE"), 0o600))
	agent := bin + " agent --scenario session-config --log " + agentLog
	stdout, stderr, code := runIn(t, dir, "run", "--json", "--command", agent, "--mode", "default", "--model", "sonnet",
		"--config", "effort=high", "--add-dir", dir, "--system-prompt-file", promptFile, "--system-prompt-mode", "override", "hi")
	require.Equal(t, 0, code, stderr)
	p := lastPosture(t, stdout)
	assert.Equal(t, "default", p.Mode)
	assert.Equal(t, "sonnet", p.Model)
	assert.Equal(t, map[string]string{"mode": "default", "model": "sonnet", "effort": "high", "fast": "false"}, p.Config)
	assert.Contains(t, stdout, `"message":"session configuration: mode default; model sonnet; config mode=default, model=sonnet, effort=high, fast=false"`)

	recs, err := refagent.ReadLog(agentLog)
	require.NoError(t, err)
	var newParams struct {
		Params struct {
			SystemPrompt          json.RawMessage `json:"systemPrompt"`
			AdditionalDirectories []string        `json:"additionalDirectories"`
		} `json:"params"`
	}
	for _, r := range recs {
		if r.Method == "session/new" {
			require.NoError(t, json.Unmarshal(r.Message, &newParams))
		}
	}
	assert.JSONEq(t, `{"mode":"override","content":[{"type":"text","text":"FROM-A-FILE"}]}`, string(newParams.Params.SystemPrompt))
	assert.Equal(t, []string{dir}, newParams.Params.AdditionalDirectories)

	// Human output names the posture in the closing line.
	stdout, stderr, code = runIn(t, dir, "run", "--command", agent, "--mode", "plan", "hi")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "; mode plan; model default; config mode=plan")
}

func TestRunSessionConfigRefused(t *testing.T) {
	bin := testbin.Path(t)
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{name: "mode not offered", args: []string{"--command", bin + " agent --scenario session-config", "--mode", "yolo"}, code: 3,
			msg: `session configuration refused: mode: \"yolo\" is not offered; the runtime offers default, acceptEdits, plan, auto`},
		{name: "override on an append-only runtime", args: []string{"--command", bin + " agent --scenario session-modes", "--system-prompt", "x", "--system-prompt-mode", "override"}, code: 3,
			msg: `system prompt mode \"override\" is not offered; the runtime offers append`},
		{name: "no modes at all", args: []string{"--mode", "default"}, code: 3, msg: "the runtime offers no modes"},
		{name: "bad --config", args: []string{"--config", "novalue"}, code: 2, msg: `want ID=VALUE, got "novalue"`},
		{name: "bad --system-prompt-mode", args: []string{"--system-prompt", "x", "--system-prompt-mode", "replace"}, code: 2,
			msg: `agent.system_prompt_mode "replace" is not one of append, override`},
		{name: "both prompt flags", args: []string{"--system-prompt", "x", "--system-prompt-file", "f"}, code: 2,
			msg: "--system-prompt and --system-prompt-file: give one of them"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, code := runIn(t, t.TempDir(), append(append([]string{"run", "--json"}, c.args...), "hi")...)
			assert.Equal(t, c.code, code, stdout+stderr)
			assert.Contains(t, stdout+stderr, c.msg)
			assert.NotContains(t, stdout, "session_started", "no prompt was sent")
		})
	}
}

func TestRunSessionConfigFromWorkflow(t *testing.T) {
	bin := testbin.Path(t)
	dir := t.TempDir()
	wf := "---\nagent:\n  command: " + bin + " agent --scenario session-config\n  mode: acceptEdits\n  model: opus\n" +
		"  config_options:\n    effort: low\n    fast: true\n  system_prompt: be terse\n---\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "WORKFLOW.md"), []byte(wf), 0o600))
	stdout, stderr, code := runIn(t, dir, "run", "--json", "--workflow", filepath.Join(dir, "WORKFLOW.md"), "hi")
	require.Equal(t, 0, code, stderr)
	p := lastPosture(t, stdout)
	assert.Equal(t, map[string]string{"mode": "acceptEdits", "model": "opus", "effort": "low", "fast": "true"}, p.Config)
	// A flag overrides the file's key.
	stdout, stderr, code = runIn(t, dir, "run", "--json", "--workflow", filepath.Join(dir, "WORKFLOW.md"), "--mode", "plan", "--config", "effort=high", "hi")
	require.Equal(t, 0, code, stderr)
	p = lastPosture(t, stdout)
	assert.Equal(t, "plan", p.Mode)
	assert.Equal(t, "high", p.Config["effort"])
}

func TestProbeShowsTheConfiguredSession(t *testing.T) {
	bin := testbin.Path(t)
	stdout, stderr, code := runIn(t, t.TempDir(), "probe", "--session", "--json", "--command", bin+" agent --scenario session-config", "--mode", "default", "--model", "haiku")
	require.Equal(t, 0, code, stderr)
	var report struct {
		Session struct {
			CurrentMode   string `json:"current_mode"`
			ConfigOptions []struct {
				ID    string `json:"id"`
				Value string `json:"value"`
			} `json:"config_options"`
		} `json:"session"`
		Advertised struct {
			SystemPromptModes []string `json:"system_prompt_modes"`
		} `json:"advertised"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &report), stdout)
	assert.Equal(t, "default", report.Session.CurrentMode)
	require.NotEmpty(t, report.Session.ConfigOptions)
	assert.Equal(t, "default", report.Session.ConfigOptions[0].Value)
	assert.Equal(t, "haiku", report.Session.ConfigOptions[1].Value)
}
