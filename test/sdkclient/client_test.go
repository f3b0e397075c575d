// Package sdkclient drives acpdrive's reference agent (`acpdrive agent`)
// with the Go SDK's client (github.com/coder/acp-go-sdk), a client acpdrive
// did not write, to show the reference agent is a valid ACP agent to it.
//
// It is a module of its own so that the SDK never enters acpdrive's
// go.mod; `make interop` runs it.
package sdkclient

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/internal/testsupport/proctest"
	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
	"github.com/acpdrive/acpdrive/refagent"
)

func TestMain(m *testing.M) { testbin.Main(m) }

// client is the SDK's Client: it records every update in order, answers
// permission requests with the first option of the kind it is told to
// pick, and refuses file-system and terminal calls (it advertises none).
type client struct {
	pick acp.PermissionOptionKind

	mu       sync.Mutex
	updates  []string
	requests []acp.RequestPermissionRequest
	changed  chan struct{}
}

var _ acp.Client = (*client)(nil)

func newClient(pick acp.PermissionOptionKind) *client {
	return &client{pick: pick, changed: make(chan struct{}, 1)}
}

func (c *client) SessionUpdate(_ context.Context, n acp.SessionNotification) error {
	c.mu.Lock()
	c.updates = append(c.updates, describe(n.Update))
	c.mu.Unlock()
	select {
	case c.changed <- struct{}{}:
	default:
	}
	return nil
}

func (c *client) RequestPermission(_ context.Context, req acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.requests = append(c.requests, req)
	c.mu.Unlock()
	for _, o := range req.Options {
		if o.Kind == c.pick {
			return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeSelected(o.OptionId)}, nil
		}
	}
	return acp.RequestPermissionResponse{Outcome: acp.NewRequestPermissionOutcomeCancelled()}, nil
}

func (*client) ReadTextFile(context.Context, acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	return acp.ReadTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsReadTextFile)
}

func (*client) WriteTextFile(context.Context, acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	return acp.WriteTextFileResponse{}, acp.NewMethodNotFound(acp.ClientMethodFsWriteTextFile)
}

func (*client) CreateTerminal(context.Context, acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	return acp.CreateTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalCreate)
}

func (*client) KillTerminal(context.Context, acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	return acp.KillTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalKill)
}

func (*client) TerminalOutput(context.Context, acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	return acp.TerminalOutputResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalOutput)
}

func (*client) ReleaseTerminal(context.Context, acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	return acp.ReleaseTerminalResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalRelease)
}

func (*client) WaitForTerminalExit(context.Context, acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	return acp.WaitForTerminalExitResponse{}, acp.NewMethodNotFound(acp.ClientMethodTerminalWaitForExit)
}

// waitUpdates waits until n updates arrived (the SDK may hand over
// notifications read before the prompt's answer a little after it).
func (c *client) waitUpdates(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		c.mu.Lock()
		got := append([]string(nil), c.updates...)
		c.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-c.changed:
		case <-deadline:
			return got
		}
	}
}

// describe renders an update as "<kind>:<id>:<detail>".
func describe(u acp.SessionUpdate) string {
	switch {
	case u.AgentMessageChunk != nil:
		id, text := "", ""
		if u.AgentMessageChunk.MessageId != nil {
			id = *u.AgentMessageChunk.MessageId
		}
		if u.AgentMessageChunk.Content.Text != nil {
			text = u.AgentMessageChunk.Content.Text.Text
		}
		return "agent_message_chunk:" + id + ":" + text
	case u.ToolCall != nil:
		return "tool_call:" + string(u.ToolCall.ToolCallId) + ":" + string(u.ToolCall.Kind) + ":" + string(u.ToolCall.Status)
	case u.ToolCallUpdate != nil:
		status := ""
		if u.ToolCallUpdate.Status != nil {
			status = string(*u.ToolCallUpdate.Status)
		}
		return "tool_call_update:" + string(u.ToolCallUpdate.ToolCallId) + ":" + status
	}
	raw, _ := json.Marshal(u)
	return "other:" + string(raw)
}

// readAgentLog reads what the reference agent received.
func readAgentLog(t *testing.T, path string) []refagent.LogRecord {
	t.Helper()
	recs, err := refagent.ReadLog(path)
	require.NoError(t, err)
	return recs
}

// TestGoSDKClientDrivesReferenceAgent runs one whole turn of the peer
// script (test/interop/testdata/peer-turn.json) under the SDK's client:
// text, a read tool call, an edit tool call whose permission request the
// client answers (refusing once, then allowing once), text, end_turn.
func TestGoSDKClientDrivesReferenceAgent(t *testing.T) {
	for _, tc := range []struct {
		pick   acp.PermissionOptionKind
		answer string
	}{
		{acp.PermissionOptionKindRejectOnce, "reject-once"},
		{acp.PermissionOptionKindAllowOnce, "allow-once"},
	} {
		t.Run(string(tc.pick), func(t *testing.T) {
			bin := testbin.Path(t)
			script, err := filepath.Abs(filepath.Join("..", "interop", "testdata", "peer-turn.json"))
			require.NoError(t, err)
			workspace := t.TempDir()
			agentLog := filepath.Join(t.TempDir(), "agent.log")

			cmd := exec.Command(bin, "agent", "--script", script, "--log", agentLog)
			cmd.Dir = workspace
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			stdin, err := cmd.StdinPipe()
			require.NoError(t, err)
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			pgid := cmd.Process.Pid
			t.Cleanup(func() {
				_ = syscall.Kill(-pgid, syscall.SIGKILL)
				proctest.WaitGroupEmpty(t, pgid, 3*time.Second)
			})

			c := newClient(tc.pick)
			conn := acp.NewClientSideConnection(c, stdin, stdout)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()

			init, err := conn.Initialize(ctx, acp.InitializeRequest{
				ProtocolVersion: acp.ProtocolVersionNumber,
				ClientInfo:      &acp.Implementation{Name: "acp-go-sdk-interop", Version: "0"},
			})
			require.NoError(t, err)
			assert.Equal(t, acp.ProtocolVersion(1), init.ProtocolVersion)
			require.NotNil(t, init.AgentInfo)
			assert.Equal(t, "acpdrive-reference-agent", init.AgentInfo.Name)

			sess, err := conn.NewSession(ctx, acp.NewSessionRequest{Cwd: workspace, McpServers: []acp.McpServer{}})
			require.NoError(t, err)
			assert.Equal(t, acp.SessionId("ref-1"), sess.SessionId)

			resp, err := conn.Prompt(ctx, acp.PromptRequest{
				SessionId: sess.SessionId,
				Prompt:    []acp.ContentBlock{acp.TextBlock("hello from the Go SDK client")},
			})
			require.NoError(t, err)
			assert.Equal(t, acp.StopReasonEndTurn, resp.StopReason)

			want := []string{
				"agent_message_chunk:m-intro:Reading the workspace first.",
				"tool_call:call-read:read:pending",
				"tool_call_update:call-read:in_progress",
				"tool_call_update:call-read:completed",
				"tool_call:call-edit:edit:pending",
				"agent_message_chunk:report-1-1:permission outcome: selected " + tc.answer,
				"tool_call_update:call-edit:completed",
				"agent_message_chunk:m-done:All done.",
			}
			assert.Equal(t, want, c.waitUpdates(t, len(want)))
			c.mu.Lock()
			require.Len(t, c.requests, 1)
			req := c.requests[0]
			c.mu.Unlock()
			assert.Equal(t, acp.ToolCallId("call-edit"), req.ToolCall.ToolCallId)
			var opts []string
			for _, o := range req.Options {
				opts = append(opts, string(o.OptionId)+"="+string(o.Kind))
			}
			assert.Equal(t, []string{"allow-once=allow_once", "allow-always=allow_always", "reject-once=reject_once", "reject-always=reject_always"}, opts)

			// End of input ends the agent with status 0.
			require.NoError(t, stdin.Close())
			select {
			case <-conn.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("the connection did not end after stdin closed")
			}
			require.NoError(t, cmd.Wait(), "agent stderr: %s", stderr.String())
			proctest.WaitGroupEmpty(t, pgid, 3*time.Second)

			var kinds []string
			var permAnswer json.RawMessage
			for _, rec := range readAgentLog(t, agentLog) {
				k := rec.Kind
				if rec.Method != "" {
					k += ":" + rec.Method
				}
				if rec.Answers != "" {
					k += ":" + rec.Answers
					var m struct {
						Result json.RawMessage `json:"result"`
					}
					require.NoError(t, json.Unmarshal(rec.Message, &m))
					permAnswer = m.Result
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
			assert.JSONEq(t, `{"outcome":{"outcome":"selected","optionId":"`+tc.answer+`"}}`, string(permAnswer))
		})
	}
}
