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

// TestAgentSandbox: agent.sandbox, agent.sandbox_net and
// agent.sandbox_writable reach the session settings
// (docs/behaviour.md#sandbox); wrong values are findings.
func TestAgentSandbox(t *testing.T) {
	cases := []struct {
		name  string
		lines []string
		want  domain.Sandbox
		check string
	}{
		{name: "absent", want: domain.Sandbox{}},
		{name: "on, no network, writable", lines: []string{"  sandbox: true", "  sandbox_net: none", "  sandbox_writable: [/x, ~/y]"},
			want: domain.Sandbox{Enabled: true, Network: domain.SandboxNetNone, Writable: []string{"/x", "~/y"}}},
		{name: "not a boolean", lines: []string{"  sandbox: yes please"}, check: config.CheckWrongType},
		{name: "unknown network", lines: []string{"  sandbox: true", "  sandbox_net: lan"}, check: domain.CheckSandboxNetInvalid},
		{name: "relative writable", lines: []string{"  sandbox: true", "  sandbox_writable: [rel]"}, check: domain.CheckSandboxWritableInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "WORKFLOW.md")
			lines := append([]string{"agent:", "  command: codex-acp"}, c.lines...)
			require.NoError(t, os.WriteFile(path, []byte(front(lines...)), 0o600))
			cfg, findings, err := config.Load(path)
			require.NoError(t, err)
			findings = append(findings, cfg.Validate()...)
			if c.check != "" {
				require.NotEmpty(t, findings)
				assert.Equal(t, c.check, findings[0].Check)
				return
			}
			assert.Empty(t, findings)
			assert.Equal(t, c.want, cfg.Sandbox)
			assert.Equal(t, c.want, cfg.SessionSettings().Sandbox)
		})
	}
}
