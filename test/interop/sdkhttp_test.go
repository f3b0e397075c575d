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

	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
	"github.com/acpdrive/acpdrive/refagent"
)

// TestTypeScriptSDKHTTPClientDrivesServe: a client nobody here wrote, the
// TypeScript SDK 2.4.0's createHttpStream, drives `acpdrive serve`
// wrapping the reference agent over Streamable HTTP: initialize,
// session/new, one prompt whose permission request the client answers,
// every update in order, end_turn, then DELETE, which ends the agent's
// input (docs/behaviour.md#network).
func TestTypeScriptSDKHTTPClientDrivesServe(t *testing.T) {
	t.Parallel()
	node := nodePath(t)
	sdk := locate(t, "ts-sdk-http", "ts-sdk-http/node_modules/@agentclientprotocol/sdk/dist/transports/http-stream.js")
	sdkDir := filepath.Dir(filepath.Dir(filepath.Dir(sdk)))
	client, err := filepath.Abs(filepath.Join("testdata", "sdk-http-client.mjs"))
	require.NoError(t, err)

	r := newRig(t)
	agentLog := filepath.Join(r.root, "agent.log")
	r.command = []string{testbin.Path(t), "agent", "--script", peerScript(t), "--log", agentLog}
	url := startAcpdriveServe(t, r, "http://127.0.0.1:0")
	require.True(t, strings.HasSuffix(url, "/acp"), "serve prints the URL a client dials: %s", url)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, client, sdkDir, url, r.workspace)
	cmd.Dir = r.workspace
	cmd.Env = r.envList()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	r.logs.Write([]byte("sdk client stdout:\n" + stdout.String() + "\nsdk client stderr:\n" + stderr.String()))

	type line struct {
		Event      string          `json:"event"`
		Message    string          `json:"message"`
		Update     json.RawMessage `json:"update"`
		SessionID  string          `json:"sessionId"`
		ToolCallID string          `json:"toolCallId"`
		Answer     string          `json:"answer"`
		StopReason string          `json:"stopReason"`
		Close      bool            `json:"close"`
	}
	var events []string
	var updates []string
	var failure string
	canClose := false
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var l line
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l), "client line %q", sc.Text())
		switch l.Event {
		case "update":
			updates = append(updates, describeUpdate(t, json.RawMessage(`{"update":`+string(l.Update)+`}`)))
			continue
		case "error":
			failure = l.Message
		case "initialized":
			canClose = l.Close
		case "session":
			assert.NotEmpty(t, l.SessionID)
		case "permission":
			events = append(events, "permission:"+l.ToolCallID+":"+l.Answer)
			continue
		case "stop":
			events = append(events, "stop:"+l.StopReason)
			continue
		}
		events = append(events, l.Event)
	}
	require.NoError(t, runErr, "the SDK client failed: %s", failure)

	want := []string{"initialized", "session", "permission:call-edit:allow-once", "stop:end_turn"}
	if canClose {
		want = append(want, "session_closed")
	}
	assert.Equal(t, append(want, "done"), events)
	assert.Equal(t, peerUpdates("allow-once"), updates)

	// What the agent received through serve, each valid, then the end of
	// its input once the client's DELETE ended the connection.
	wantKinds := []string{
		"request:initialize",
		"request:session/new",
		"request:session/prompt",
		"response:session/request_permission",
	}
	if canClose {
		wantKinds = append(wantKinds, "request:session/close")
	}
	wantKinds = append(wantKinds, "eof")
	var kinds []string
	assert.Eventually(t, func() bool {
		recs, err := refagent.ReadLog(agentLog)
		if err != nil {
			return false
		}
		kinds = kinds[:0]
		for _, rec := range recs {
			k := rec.Kind
			if rec.Method != "" {
				k += ":" + rec.Method
			}
			if rec.Answers != "" {
				k += ":" + rec.Answers
			}
			kinds = append(kinds, k)
		}
		return len(kinds) > 0 && kinds[len(kinds)-1] == "eof"
	}, 30*time.Second, 50*time.Millisecond, "the agent's input ends after DELETE")
	assert.Equal(t, wantKinds, kinds)
}
