//go:build linux

package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/refagent"
)

// TestURLWorkspaceAnnounced: a runtime at a URL is sent, without
// --workspace, the workspace its initialize answer announces
// (agentCapabilities._meta.qwen.workspaceCwd, as qwen serve does), else
// the current directory; --workspace is sent as given over both
// (docs/behaviour.md#network). Through run and batch.
func TestURLWorkspaceAnnounced(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := func(name, init string) string {
		p := filepath.Join(dir, name+".json")
		require.NoError(t, os.WriteFile(p, []byte(`{"name":"`+name+`","initialize":{"agentCapabilities":`+init+`}}`), 0o600))
		return p
	}
	announcing := script("announcing", `{"_meta":{"qwen":{"workspaceCwd":"/srv/announced","methods":[]}}}`)
	relative := script("relative", `{"_meta":{"qwen":{"workspaceCwd":"srv/announced"}}}`)
	silent := script("silent", `{"_meta":{"other":{"workspaceCwd":"/srv/other"}}}`)

	// cwdSent serves script over tcp, runs args against it from a fresh
	// directory and returns that directory and the cwd of every
	// session/new the agent received.
	cwdSent := func(t *testing.T, script string, args ...string) (string, []string) {
		log := filepath.Join(t.TempDir(), "agent.log")
		url := serveAt(t, "tcp://127.0.0.1:0", nil, nil, "--script", script, "--log", log)
		here, err := filepath.EvalSymlinks(t.TempDir())
		require.NoError(t, err)
		args = append(append([]string{}, args...), "--url", url)
		if args[0] == "batch" {
			args = append(args, writeTasks(t, t.TempDir(), `{"id":"a","prompt":"hi"}`))
		} else {
			args = append(args, "hi")
		}
		_, stderr, code := runIn(t, here, args...)
		require.Equal(t, 0, code, stderr)
		var cwds []string
		assert.Eventually(t, func() bool {
			recs, err := refagent.ReadLog(log)
			if err != nil {
				return false
			}
			cwds = cwds[:0]
			for _, rec := range recs {
				if rec.Method == "session/new" {
					var m struct {
						Params struct {
							Cwd string `json:"cwd"`
						} `json:"params"`
					}
					require.NoError(t, json.Unmarshal(rec.Message, &m))
					cwds = append(cwds, m.Params.Cwd)
				}
			}
			return len(cwds) > 0
		}, 30*time.Second, 20*time.Millisecond)
		return here, cwds
	}

	for _, command := range []string{"run", "batch"} {
		t.Run(command, func(t *testing.T) {
			t.Parallel()
			_, cwds := cwdSent(t, announcing, command)
			assert.Equal(t, []string{"/srv/announced"}, cwds, "the announced workspace")

			_, cwds = cwdSent(t, announcing, command, "--workspace", "/srv/given")
			assert.Equal(t, []string{"/srv/given"}, cwds, "--workspace as given")

			here, cwds := cwdSent(t, silent, command)
			assert.Equal(t, []string{here}, cwds, "nothing announced: the current directory")

			here, cwds = cwdSent(t, relative, command)
			assert.Equal(t, []string{here}, cwds, "no absolute path announced: the current directory")
		})
	}
}
