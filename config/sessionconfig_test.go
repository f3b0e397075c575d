package config_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/acpdrive/acpdrive/config"
	"github.com/acpdrive/acpdrive/domain"
)

func TestParseSessionConfig(t *testing.T) {
	cmd := "  command: claude-agent-acp"
	cases := []struct {
		name     string
		lines    []string
		session  domain.SessionConfig
		findings []domain.Finding
	}{
		{name: "every key", lines: []string{"agent:", cmd, "  mode: default", "  model: sonnet",
			"  config_options:", "    effort: high", "    fast: true", "    ultracode: off",
			"  additional_directories: [/srv/lib, ../shared]", "  system_prompt: |", "    Be terse.", "  system_prompt_mode: override"},
			session: domain.SessionConfig{Mode: "default", Model: "sonnet",
				Options:               []domain.ConfigSetting{{ID: "effort", Value: "high"}, {ID: "fast", Value: "true"}, {ID: "ultracode", Value: "off"}},
				AdditionalDirectories: []string{"/srv/lib", "/repo/shared"}, SystemPrompt: "Be terse.\n", SystemPromptMode: "override"}},
		{name: "config_options not a mapping", lines: []string{"agent:", cmd, "  config_options: [a]"},
			findings: []domain.Finding{errorF(config.CheckWrongType, "agent.config_options: expected a mapping, found a list (line 4)")}},
		{name: "an option value of the wrong type", lines: []string{"agent:", cmd, "  config_options:", "    effort: 3"},
			findings: []domain.Finding{errorF(config.CheckWrongType, "agent.config_options.effort: expected a string or a boolean, found an integer (line 5)")}},
		{name: "mode not a string", lines: []string{"agent:", cmd, "  mode: [a]"},
			findings: []domain.Finding{errorF(config.CheckWrongType, "agent.mode: expected a string, found a list (line 4)")}},
		{name: "system_prompt_mode invalid", lines: []string{"agent:", cmd, "  system_prompt: x", "  system_prompt_mode: replace"},
			session:  domain.SessionConfig{SystemPrompt: "x", SystemPromptMode: "replace"},
			findings: []domain.Finding{errorF(domain.CheckSystemPromptModeInvalid, `agent.system_prompt_mode "replace" is not one of append, override`)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, findings := config.Parse([]byte(front(c.lines...)), wf)
			assert.Equal(t, c.findings, findings)
			if c.findings == nil || c.session.SystemPromptMode != "" {
				assert.Equal(t, c.session, cfg.Session)
				assert.Equal(t, c.session, cfg.SessionSettings().Session)
			}
		})
	}
}
