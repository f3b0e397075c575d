//go:build unix

package main_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/internal/testsupport/sshtest"
	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
)

// TestRunMeasuresOverSSH: over both transports, behind a real sshd, a
// runtime whose prompt results carry usage (the reference agent's
// "#usage-wire") is measured from them, as no journal source can claim a
// remote launch; token counts is then no gap, and the cost crosses too.
func TestRunMeasuresOverSSH(t *testing.T) {
	srv := sshtest.Start(t)
	agent := srv.Install(t, testbin.Path(t), "acpdrive")
	for _, transport := range []string{"openssh", "native"} {
		t.Run(transport, func(t *testing.T) {
			turn := usageTurn(t, "", map[string]any{"used": 3014, "size": 1000000, "cost": map[string]any{"amount": 0.25, "currency": "USD"}})
			stdout, stderr, code := runEnv(t, t.TempDir(), nil, "run", "--json", "--command", agent+" agent",
				"--ssh-host", srv.Alias, "--ssh-config", srv.ConfigFile, "--ssh-transport", transport,
				"--workspace", srv.Workspace, turn, "#usage-wire")
			require.Equal(t, 0, code, "stdout: %s\nstderr: %s", stdout, stderr)
			lines := wireLines(t, stdout)
			events := linesOf(lines, "token_usage")
			require.Len(t, events, 2, stdout)
			for _, ev := range events {
				assert.Equal(t, "acp_prompt_result", ev["source"])
				assert.Equal(t, claudeFigures, ev["usage"])
			}
			assert.Equal(t, map[string]any{"amount": 0.25, "currency": "USD"}, events[0]["cost"])
			run := runResult(t, stdout)
			assert.Equal(t, srv.Alias, run["host"])
			assert.Equal(t, float64(2), run["measured_turns"])
			assert.NotContains(t, run["capability_gaps"], "token counts", "run_result: %v", run)
		})
	}
}
