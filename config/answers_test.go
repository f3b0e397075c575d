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

// TestAnswersFile: agent.answers names a file relative to the WORKFLOW.md
// directory; a file that cannot be read or parsed is a finding
// (docs/behaviour.md#elicitation).
func TestAnswersFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "answers.json"), []byte(`{"fields":{"branch":"dev"},"defaults":true}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.json"), []byte(`{"fields":{"branch":{"name":"dev"}}}`), 0o644))
	workflow := filepath.Join(dir, "WORKFLOW.md")

	cfg, findings := config.Parse([]byte(front("agent:", "  command: x", "  answers: answers.json")), workflow)
	require.Empty(t, findings)
	a := cfg.SessionSettings().Answers
	require.NotNil(t, a)
	assert.Equal(t, domain.Answers{Fields: map[string]any{"branch": "dev"}, Defaults: true}, *a)

	cfg, findings = config.Parse([]byte(front("agent:", "  command: x")), workflow)
	require.Empty(t, findings)
	assert.Nil(t, cfg.SessionSettings().Answers)

	for _, tt := range []struct{ value, check string }{
		{"bad.json", domain.CheckAnswersInvalid},
		{"missing.json", domain.CheckAnswersInvalid},
		{"[a]", "config.wrong_type"},
	} {
		_, findings = config.Parse([]byte(front("agent:", "  command: x", "  answers: "+tt.value)), workflow)
		require.Len(t, findings, 1, tt.value)
		assert.Equal(t, tt.check, findings[0].Check, tt.value)
		assert.True(t, domain.HasErrors(findings), tt.value)
	}
}
