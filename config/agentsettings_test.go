package config_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/config"
	"github.com/acpdrive/acpdrive/domain"
)

// TestApplyAgentOverridesOnlyTheKeysGiven: a batch task's settings
// replace the keys they name and keep the rest of the base configuration.
func TestApplyAgentOverridesOnlyTheKeysGiven(t *testing.T) {
	base := domain.DefaultConfig()
	base.Command = []string{"runtime", "--acp"}
	base.Session.Mode = "default"
	base.TurnTimeout = time.Hour
	got, findings := config.ApplyAgent(base, []byte(`{"command": "other --flag 'a b'", "turn_timeout_ms": 1500,
		"model": "sonnet", "sandbox": true, "sandbox_net": "none", "additional_directories": ["notes", "/abs"],
		"output_schema": "schema.json", "max_retries": 2}`), "/tasks")
	assert.Empty(t, findings)
	assert.Equal(t, []string{"other", "--flag", "a b"}, got.Command)
	assert.Equal(t, 1500*time.Millisecond, got.TurnTimeout)
	assert.Equal(t, "default", got.Session.Mode, "a key not given keeps the base's value")
	assert.Equal(t, "sonnet", got.Session.Model)
	assert.True(t, got.Sandbox.Enabled)
	assert.Equal(t, domain.SandboxNetwork("none"), got.Sandbox.Network)
	assert.Equal(t, []string{"/tasks/notes", "/abs"}, got.Session.AdditionalDirectories, "relative paths resolve against dir")
	assert.Equal(t, "/tasks/schema.json", got.OutputSchema)
	assert.Equal(t, 2, got.MaxRetries)
	assert.Equal(t, []string{"runtime", "--acp"}, base.Command, "the base is not changed")
	assert.Equal(t, base.StallTimeout, got.StallTimeout)

	same, findings := config.ApplyAgent(base, nil, "/tasks")
	assert.Empty(t, findings)
	assert.Equal(t, base, same, "no settings change nothing")
	same, findings = config.ApplyAgent(base, []byte(`null`), "/tasks")
	assert.Empty(t, findings)
	assert.Equal(t, base, same)
}

// TestApplyAgentFindings: the settings get the checks and messages of
// the agent block of a WORKFLOW.md, without line numbers.
func TestApplyAgentFindings(t *testing.T) {
	base := domain.DefaultConfig()
	base.Command = []string{"runtime"}
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.txt")
	require.NoError(t, os.WriteFile(rules, []byte("allow kind=nonsense\n"), 0o600))
	for _, tc := range []struct {
		name, settings string
		want           []domain.Finding
	}{
		{"wrong type", `{"turn_timeout_ms": true}`, []domain.Finding{
			errorF("config.wrong_type", "agent.turn_timeout_ms: expected an integer, found a boolean")}},
		{"not a mapping", `"fast"`, []domain.Finding{
			errorF("config.wrong_type", "agent: expected a mapping, found a string")}},
		{"unknown key", `{"colour": "blue"}`, []domain.Finding{
			warnF("config.unknown_key", "agent.colour: the agent block has no such key; it is ignored")}},
		{"duplicate key", `{"mode": "a", "mode": "b"}`, []domain.Finding{
			errorF("config.duplicate_key", "agent.mode: the key appears twice")}},
		{"protocol", `{"protocol": "3"}`, nil},
		{"empty command", `{"command": ""}`, []domain.Finding{cmdRequired}},
		{"bad command", `{"command": "run 'unterminated"}`, nil},
		{"rules file", `{"permissions": "rules:rules.txt"}`, nil},
		{"sandbox net", `{"sandbox_net": "wifi"}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, findings := config.ApplyAgent(base, []byte(tc.settings), dir)
			if tc.want != nil {
				assert.Equal(t, tc.want, findings)
				return
			}
			require.True(t, domain.HasErrors(findings), "%v", findings)
			for _, f := range findings {
				assert.NotContains(t, f.Message, "(line ", "no line numbers")
			}
			// The same key in a WORKFLOW.md draws the same finding, with its line.
			fm := "---\nagent:\n  " + yamlOf(t, tc.settings) + "\n"
			if tc.name != "bad command" {
				fm += "  command: runtime\n"
			}
			_, fromFile := config.Parse([]byte(fm+"---\n"), filepath.Join(dir, "WORKFLOW.md"))
			require.NotEmpty(t, fromFile)
			assert.Equal(t, findings[0].Check, fromFile[0].Check)
			assert.Equal(t, findings[0].Message, regexp.MustCompile(` \(line [0-9]+\)$`).ReplaceAllString(fromFile[0].Message, ""))
		})
	}
}

// yamlOf turns a one-key JSON object into the YAML line "key: value".
func yamlOf(t *testing.T, settings string) string {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(settings), &m))
	require.Len(t, m, 1)
	for k, v := range m {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		return k + ": " + string(b)
	}
	return ""
}
