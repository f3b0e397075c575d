//go:build unix

package app_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/sshexec"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/sshtest"
	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
)

// TestFleetOverTwoSSHHosts: the README's fleet program over two hosts that
// are two aliases of the test sshd: three tasks run concurrently, each
// asking a structured result against a schema and retrying its
// rate-limited first turn once; both hosts take tasks; the fleet's totals
// count every attempt; closing leaves nothing running on the hosts
// (docs/behaviour.md#fleet).
func TestFleetOverTwoSSHHosts(t *testing.T) {
	srv := sshtest.Start(t)
	agent := srv.Install(t, testbin.Path(t), "acpdrive")
	script := filepath.Join(srv.Workspace, "fleet-agent.json")
	require.NoError(t, os.WriteFile(script, []byte(`{"defaultTurn":"busy","turns":{"ok":{"steps":[{"step":"text","text":"{\"status\":\"done\"}"}]},
 "busy":{"next":"ok","steps":[{"step":"error","error":{"code":429,"message":"slow down","data":{"retryAfterMs":20}}}]}}}`), 0o644))
	host := func(alias string) app.FleetHost {
		return app.FleetHost{Name: alias, Launcher: sshexec.New(sshexec.Options{Host: alias, ConfigFile: srv.ConfigFile})}
	}
	fleet, err := app.NewFleet(app.FleetOptions{Hosts: []app.FleetHost{host(srv.Alias), host(srv.SecondAlias)}})
	require.NoError(t, err)
	settings := domain.DefaultSessionSettings()
	settings.Command = []string{agent, "agent", "--script", script}
	settings.OutputSchema = []byte(`{"type":"object","properties":{"status":{"type":"string"}},"required":["status"]}`)
	results := make([]app.RunResult, 3)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			results[i] = fleet.Run(context.Background(), app.Options{Settings: settings, Workspace: srv.Workspace},
				app.Run{Prompts: []string{"task"}, Retry: app.RetryPolicy{MaxRetries: 1}})
		})
	}
	wg.Wait()
	hosts := map[string]bool{}
	for i, r := range results {
		require.NoError(t, r.Err, "task %d", i)
		assert.True(t, r.Completed, "task %d", i)
		assert.JSONEq(t, `{"status":"done"}`, string(r.Result), "task %d", i)
		assert.Equal(t, 2, r.Totals.Turns, "task %d: the rate-limited attempt and the retry", i)
		assert.NoError(t, r.StopErr)
		hosts[r.Host] = true
	}
	assert.Equal(t, map[string]bool{srv.Alias: true, srv.SecondAlias: true}, hosts, "both hosts took tasks")
	assert.Equal(t, 6, fleet.Totals().Turns, "every attempt")
	require.NoError(t, fleet.Close(context.Background()))
	if left := srv.WaitNoRemoteProcs(t, 10*time.Second); len(left) > 0 {
		t.Errorf("remote processes left: %v", left)
	}
}
