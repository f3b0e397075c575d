//go:build linux

package main_test

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
)

// TestRunSandboxFlags: --sandbox runs the turn under bubblewrap; without
// bwrap on PATH the start is refused with agent_not_found and the install
// hint; --sandbox-net takes host or none and needs the sandbox on
// (docs/behaviour.md#sandbox).
func TestRunSandboxFlags(t *testing.T) {
	agent := testbin.Path(t) + " agent --scenario echo"
	t.Run("sandboxed run", func(t *testing.T) {
		if _, err := exec.LookPath("bwrap"); err != nil {
			t.Skip("bubblewrap (bwrap) is not installed")
		}
		stdout, stderr, code := runIn(t, t.TempDir(), "run", "--json", "--sandbox", "--sandbox-net", "none", "--command", agent, "hi")
		require.Equal(t, 0, code, stderr+stdout)
		assert.Contains(t, stdout, `"type":"run_result"`)
	})
	t.Run("no bwrap", func(t *testing.T) {
		stdout, stderr, code := runEnv(t, t.TempDir(), []string{"PATH=" + t.TempDir()}, "run", "--json", "--sandbox", "--command", agent, "hi")
		assert.NotEqual(t, 0, code)
		assert.Contains(t, stdout+stderr, "agent_not_found")
		assert.Contains(t, stdout+stderr, "apt-get install bubblewrap")
	})
	t.Run("bad network", func(t *testing.T) {
		_, stderr, code := runIn(t, t.TempDir(), "run", "--sandbox", "--sandbox-net", "lan", "--command", agent, "hi")
		assert.NotEqual(t, 0, code)
		assert.Contains(t, stderr, "--sandbox-net")
	})
	t.Run("network without the sandbox", func(t *testing.T) {
		_, stderr, code := runIn(t, t.TempDir(), "run", "--sandbox-net", "none", "--command", agent, "hi")
		assert.NotEqual(t, 0, code)
		assert.Contains(t, stderr, "the sandbox is off")
	})
}
