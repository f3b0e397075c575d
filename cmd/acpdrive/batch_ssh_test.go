//go:build unix

package main_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/internal/testsupport/sshtest"
	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
)

// TestBatchPlacesOverTheSSHPool: batch spreads its sessions over the
// --ssh-host pool, the least-loaded host first, each host's sessions on
// one shared process there, and a host that cannot be reached is left out;
// each line names its host (docs/behaviour.md#batch).
//
// The pool's two hosts are two aliases of the one test sshd
// (sshtest.Alias and sshtest.SecondAlias, both 127.0.0.1 and the same
// port): to acpdrive they are two hosts, each with its launcher and its
// shared processes. The reference agent numbers the sessions of one
// process ref-1, ref-2, …, so two tasks on one host with different
// session ids ran on one process (kept warm with --keep-warm, so whether
// they overlapped does not matter). The four tasks are placed as their
// goroutines start, long before any of them can have finished an SSH
// session; with --parallel 4, at most four are placed at once, so no host
// carries more than two: one shared process each.
func TestBatchPlacesOverTheSSHPool(t *testing.T) {
	srv := sshtest.Start(t)
	agent := srv.Install(t, testbin.Path(t), "acpdrive")
	for _, transport := range []string{"openssh", "native"} {
		t.Run(transport, func(t *testing.T) {
			dir := t.TempDir()
			tasks := writeTasks(t, dir,
				`{"id":"a","prompt":"alpha"}`, `{"id":"b","prompt":"beta"}`,
				`{"id":"c","prompt":"gamma"}`, `{"id":"d","prompt":"delta"}`)
			common := []string{"batch", "--json", "--command", agent + " agent --scenario multi-session",
				"--ssh-config", srv.ConfigFile, "--ssh-transport", transport, "--workspace", srv.Workspace,
				"--parallel", "4", "--sessions-per-process", "2", "--keep-warm", "1h"}

			stdout, stderr, code := runEnv(t, dir, nil, append(common, "--ssh-host", srv.Alias+","+srv.SecondAlias, tasks)...)
			require.Equal(t, 0, code, "stdout: %s\nstderr: %s", stdout, stderr)
			got := taskLines(t, stdout, 4)
			perHost := map[string]map[string]bool{}
			for id, l := range got {
				assert.True(t, l.Completed, id)
				require.Contains(t, []string{srv.Alias, srv.SecondAlias}, l.Host, "%s: %+v", id, l)
				if perHost[l.Host] == nil {
					perHost[l.Host] = map[string]bool{}
				}
				perHost[l.Host][l.SessionID] = true
				assert.Equal(t, map[string]string{"a": "alpha", "b": "beta", "c": "gamma", "d": "delta"}[id], l.TurnResults[0].Reply)
			}
			assert.Len(t, perHost[srv.Alias], 2, "two sessions on %s's one process: %v", srv.Alias, perHost)
			assert.Len(t, perHost[srv.SecondAlias], 2, "two sessions on %s's one process: %v", srv.SecondAlias, perHost)

			// A host that cannot be reached takes no task: every one runs on
			// the live host, on its one process (at most two at once there
			// with --parallel 2).
			stdout, stderr, code = runEnv(t, dir, nil, append(common, "--parallel", "2",
				"--ssh-host", srv.DownAlias+","+srv.Alias, tasks)...)
			require.Equal(t, 0, code, "stdout: %s\nstderr: %s", stdout, stderr)
			got = taskLines(t, stdout, 4)
			ids := map[string]bool{}
			for id, l := range got {
				assert.True(t, l.Completed, id)
				assert.Equal(t, srv.Alias, l.Host, id)
				ids[l.SessionID] = true
			}
			assert.Len(t, ids, 4, "one process, a session each: %v", ids)
			assert.Contains(t, stderr, "acpdrive batch: SSH host "+srv.DownAlias+" could not be reached; no further task is placed there")
		})
	}
	if left := srv.WaitNoRemoteProcs(t, 10*time.Second); len(left) > 0 {
		t.Errorf("remote processes left: %v", left)
	}
}
