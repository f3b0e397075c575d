package config_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/config"
	"github.com/acpdrive/acpdrive/domain"
)

func TestParsePermissions(t *testing.T) {
	t.Parallel()
	for line, want := range map[string]domain.PermissionPreset{
		"":                         domain.PresetRefuse,
		"  permissions:":           domain.PresetRefuse,
		"  permissions: refuse":    domain.PresetRefuse,
		"  permissions: read":      domain.PresetRead,
		`  permissions: "edit"`:    domain.PresetEdit,
		"  permissions: allow-all": domain.PresetRefuse,
	} {
		lines := []string{"agent:", "  command: x"}
		if line != "" {
			lines = append(lines, line)
		}
		cfg, findings := config.Parse([]byte(front(lines...)), wf)
		p := cfg.SessionSettings().Permissions
		if p.Preset == "" {
			p.Preset = domain.PresetRefuse
		}
		assert.Equal(t, want, p.Preset, line)
		if line == "  permissions: allow-all" {
			require.Len(t, findings, 1)
			assert.Equal(t, domain.CheckPermissionsInvalid, findings[0].Check)
			assert.Contains(t, findings[0].Message, "agent.permissions: ")
			assert.Contains(t, findings[0].Message, "(line 4)")
		} else {
			assert.Empty(t, findings, line)
		}
	}
	_, findings := config.Parse([]byte(front("agent:", "  command: x", "  permissions: [edit]")), wf)
	require.Len(t, findings, 1)
	assert.Equal(t, "config.wrong_type", findings[0].Check)
}

// TestPermissionRulesFile: a relative rules file resolves against the
// WORKFLOW.md directory; each fault is a finding with the file's line.
func TestPermissionRulesFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "rules.txt")
	require.NoError(t, os.WriteFile(good, []byte("allow kind=read\nperson kind=execute\nrefuse\n"), 0o644))
	bad := filepath.Join(dir, "bad.txt")
	require.NoError(t, os.WriteFile(bad, []byte("# rules\nallow kind=reed\ngrant\n"), 0o644))
	workflow := filepath.Join(dir, "WORKFLOW.md")

	cfg, findings := config.Parse([]byte(front("agent:", "  command: x", "  permissions: rules:rules.txt")), workflow)
	require.Empty(t, findings)
	p := cfg.SessionSettings().Permissions
	assert.Equal(t, domain.PresetRules, p.Preset)
	assert.Equal(t, good, p.Source)
	require.Len(t, p.Rules, 3)
	assert.Equal(t, domain.PermissionPerson, p.Decide(domain.PermissionRequest{Kind: domain.ToolExecute}).Verdict)
	assert.Empty(t, cfg.SessionSettings().Validate())

	cfg, findings = config.Parse([]byte(front("agent:", "  command: x", "  permissions: rules:bad.txt")), workflow)
	require.Len(t, findings, 2, "%v", findings)
	assert.Contains(t, findings[0].Message, bad+":2: ")
	assert.Contains(t, findings[1].Message, bad+":3: ")
	assert.True(t, domain.HasErrors(findings))
	assert.NotEmpty(t, cfg.SessionSettings().Validate(), "a session refuses a rules file that did not parse")

	_, findings = config.Parse([]byte(front("agent:", "  command: x", "  permissions: rules:missing.txt")), workflow)
	require.Len(t, findings, 1)
	assert.Contains(t, findings[0].Message, "cannot be read")
}
