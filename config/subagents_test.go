package config_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/config"
)

// TestAgentSubagents: agent.subagents is a boolean that reaches the
// session settings; any other type is refused.
func TestAgentSubagents(t *testing.T) {
	cases := []struct {
		name  string
		value string
		want  bool
		bad   bool
	}{{"true", "true", true, false}, {"false", "false", false, false}, {"not a boolean", "sometimes", false, true}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "WORKFLOW.md")
			require.NoError(t, os.WriteFile(path, []byte(front("agent:", "  command: codex-acp", "  subagents: "+c.value)), 0o600))
			cfg, findings, err := config.Load(path)
			require.NoError(t, err)
			if c.bad {
				require.NotEmpty(t, findings)
				assert.Contains(t, findings[0].Message, "agent.subagents")
				return
			}
			assert.Empty(t, findings)
			assert.Equal(t, c.want, cfg.Subagents)
			assert.Equal(t, c.want, cfg.SessionSettings().Subagents)
		})
	}
}
