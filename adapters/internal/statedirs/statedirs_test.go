package statedirs_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/acpdrive/acpdrive/adapters/internal/statedirs"
)

// TestPaths: a state directory at home, and where its
// variable moves it, locally and as remote shell words.
func TestPaths(t *testing.T) {
	env := map[string]string{"CODEX_HOME": "/c", "GEMINI_CLI_HOME": "/g", "XDG_DATA_HOME": "rel"}
	getenv := func(k string) string { return env[k] }
	cases := []struct {
		d     statedirs.Dir
		local []string
		shell []string
	}{
		{statedirs.Dir{Sub: ".qwen"}, []string{"/h/.qwen"}, []string{"${HOME}/.qwen"}},
		{statedirs.Dir{Sub: ".codex", Env: "CODEX_HOME"}, []string{"/h/.codex", "/c"},
			[]string{"${HOME}/.codex", "${CODEX_HOME:-${HOME}/.codex}"}},
		{statedirs.Dir{Sub: ".gemini", Env: "GEMINI_CLI_HOME", EnvSub: ".gemini"}, []string{"/h/.gemini", "/g/.gemini"},
			[]string{"${HOME}/.gemini", "${GEMINI_CLI_HOME:-${HOME}/.gemini}/.gemini"}},
		{statedirs.Dir{Sub: ".local/share/opencode", Env: "XDG_DATA_HOME", EnvSub: "opencode"},
			[]string{"/h/.local/share/opencode"},
			[]string{"${HOME}/.local/share/opencode", "${XDG_DATA_HOME:-${HOME}/.local/share/opencode}/opencode"}},
	}
	for _, c := range cases {
		assert.Equal(t, c.local, c.d.Paths("/h", getenv), c.d.Sub)
		assert.Equal(t, c.shell, c.d.ShellPaths(), c.d.Sub)
	}
	for _, d := range statedirs.All() {
		assert.NotEmpty(t, d.Runtime)
		assert.NotEmpty(t, d.Sub)
	}
}
