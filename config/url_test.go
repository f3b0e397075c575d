package config_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/acpdrive/acpdrive/config"
	"github.com/acpdrive/acpdrive/domain"
)

// TestAgentURL: agent.url stands in for agent.command and is refused
// beside it or beside SSH hosts (docs/behaviour.md#network).
func TestAgentURL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "WORKFLOW.md")
	for _, tc := range []struct {
		name, agent string
		wantCheck   string
	}{
		{"url alone", "  url: tcp://127.0.0.1:7000\n  token_env: ACP_TOKEN\n", ""},
		{"url and command", "  url: tcp://127.0.0.1:7000\n  command: runtime --acp\n", domain.CheckURLWithCommand},
		{"neither", "  max_turns: 2\n", domain.CheckCommandRequired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, findings := config.Parse([]byte("---\nagent:\n"+tc.agent+"---\n"), path)
			var errs []string
			for _, f := range findings {
				if f.Severity == domain.SeverityError {
					errs = append(errs, f.Check)
				}
			}
			if tc.wantCheck == "" {
				assert.Empty(t, errs)
				assert.Equal(t, "tcp://127.0.0.1:7000", cfg.URL)
				assert.Equal(t, "ACP_TOKEN", cfg.TokenEnv)
				return
			}
			assert.Equal(t, []string{tc.wantCheck}, errs)
		})
	}
	ssh := domain.DefaultConfig()
	ssh.URL, ssh.SSHHosts = "tcp://127.0.0.1:7000", []string{"build-1"}
	findings := ssh.Validate()
	assert.Contains(t, findings, domain.Finding{Severity: domain.SeverityError, Check: domain.CheckURLWithCommand, Message: domain.MsgURLWithSSH})
}
