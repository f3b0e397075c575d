//go:build interop

package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/internal/testsupport/proctest"
	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
	"github.com/acpdrive/acpdrive/refagent"
)

// The other direction: acpdrive's reference agent (`acpdrive agent`) driven
// by acpx 0.19.1, a headless ACP client we did not write. The agent runs
// testdata/peer-turn.json: a message, a read tool call that completes, an
// edit tool call with a permission request that acpx answers, the answer
// reported back as a message, a closing message, end_turn.

// peerScript is the reference agent's script for peer clients.
func peerScript(t *testing.T) string {
	p, err := filepath.Abs(filepath.Join("testdata", "peer-turn.json"))
	require.NoError(t, err)
	return p
}

// readAgentLog reads what the reference agent received.
func readAgentLog(t *testing.T, path string) []refagent.LogRecord {
	t.Helper()
	recs, err := refagent.ReadLog(path)
	require.NoError(t, err)
	return recs
}

// peerUpdates is what the agent streams for the peer turn, as
// "<sessionUpdate>:<id>:<detail>", with the reported permission answer.
func peerUpdates(answer string) []string {
	return []string{
		"agent_message_chunk:m-intro:Reading the workspace first.",
		"tool_call:call-read:read:pending",
		"tool_call_update:call-read:in_progress",
		"tool_call_update:call-read:completed",
		"tool_call:call-edit:edit:pending",
		"agent_message_chunk:report-1-1:permission outcome: selected " + answer,
		"tool_call_update:call-edit:completed",
		"agent_message_chunk:m-done:All done.",
	}
}

func TestAcpxDrivesReferenceAgent(t *testing.T) {
	t.Parallel()
	nodePath(t)
	acpx := locate(t, "acpx", "acpx/node_modules/.bin/acpx")
	for _, tc := range []struct {
		flag   string
		answer string
		code   int
	}{
		// acpx exits 5 (its PERMISSION_DENIED) when it denied a request,
		// though the turn itself ended with end_turn.
		{"--approve-all", "allow-once", 0},
		{"--deny-all", "reject-once", 5},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			r := newRig(t)
			agentLog := filepath.Join(r.root, "agent.log")
			agentCmd := strings.Join([]string{
				shellQuote(testbin.Path(t)), "agent", "--script", shellQuote(peerScript(t)), "--log", shellQuote(agentLog),
			}, " ")
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, acpx, "--format", "json", tc.flag, "--cwd", r.workspace,
				"--agent", agentCmd, "exec", "hello from acpx")
			cmd.Env = r.envList()
			cmd.Dir = r.workspace
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else {
				require.NoError(t, err)
			}
			// Nothing acpx started in its process group outlives it.
			proctest.WaitGroupEmpty(t, cmd.Process.Pid, 3*time.Second)
			r.logs.Write([]byte("acpx stdout:\n" + stdout.String() + "\nacpx stderr:\n" + stderr.String()))
			require.Equal(t, tc.code, code, "acpx exit status")

			// acpx --format json prints the JSON-RPC stream it saw.
			var updates []string
			var stop string
			var answered []string
			sc := bufio.NewScanner(&stdout)
			sc.Buffer(make([]byte, 1<<20), 16<<20)
			for sc.Scan() {
				var m struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
					Params json.RawMessage `json:"params"`
					Result json.RawMessage `json:"result"`
					Error  json.RawMessage `json:"error"`
				}
				if json.Unmarshal(sc.Bytes(), &m) != nil {
					continue
				}
				assert.Nil(t, m.Error, "no JSON-RPC error either way: %s", sc.Text())
				switch {
				case m.Method == "session/update":
					updates = append(updates, describeUpdate(t, m.Params))
				case m.Method == "" && strings.Contains(string(m.Result), `"stopReason"`):
					var res struct {
						StopReason string `json:"stopReason"`
					}
					require.NoError(t, json.Unmarshal(m.Result, &res))
					stop = res.StopReason
				case m.Method == "" && strings.Contains(string(m.Result), `"outcome"`):
					answered = append(answered, string(m.Result))
				}
			}
			assert.Equal(t, peerUpdates(tc.answer), updates)
			assert.Equal(t, "end_turn", stop)
			require.Len(t, answered, 1)
			assert.JSONEq(t, `{"outcome":{"outcome":"selected","optionId":"`+tc.answer+`"}}`, answered[0])

			// What the agent received: acpx's initialize, session/new,
			// session/prompt and the permission answer, each valid (no
			// invalid line), then the end of its input.
			var kinds []string
			for _, rec := range readAgentLog(t, agentLog) {
				k := rec.Kind
				if rec.Method != "" {
					k += ":" + rec.Method
				}
				if rec.Answers != "" {
					k += ":" + rec.Answers
				}
				kinds = append(kinds, k)
			}
			assert.Equal(t, []string{
				"request:initialize",
				"request:session/new",
				"request:session/prompt",
				"response:session/request_permission",
				"eof",
			}, kinds)
		})
	}
}

// describeUpdate renders a session/update as "<kind>:<id>:<detail>".
func describeUpdate(t *testing.T, params json.RawMessage) string {
	t.Helper()
	var p struct {
		Update struct {
			Kind       string          `json:"sessionUpdate"`
			MessageID  string          `json:"messageId"`
			ToolCallID string          `json:"toolCallId"`
			ToolKind   string          `json:"kind"`
			Status     string          `json:"status"`
			Content    json.RawMessage `json:"content"`
		} `json:"update"`
	}
	require.NoError(t, json.Unmarshal(params, &p))
	u := p.Update
	switch u.Kind {
	case "agent_message_chunk":
		var c struct {
			Text string `json:"text"`
		}
		require.NoError(t, json.Unmarshal(u.Content, &c))
		return u.Kind + ":" + u.MessageID + ":" + c.Text
	case "tool_call":
		return u.Kind + ":" + u.ToolCallID + ":" + u.ToolKind + ":" + u.Status
	case "tool_call_update":
		return u.Kind + ":" + u.ToolCallID + ":" + u.Status
	}
	return u.Kind
}
