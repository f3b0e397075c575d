package app

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/protocol/acpclient"
	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

// ignoreInbound is a jsonrpc.Handler for a connection nothing is read on.
type ignoreInbound struct{}

func (ignoreInbound) HandleNotification(string, json.RawMessage) {}
func (ignoreInbound) HandleRequest(jsonrpc.Request)              {}
func (ignoreInbound) HandleMalformed([]byte, error)              {}
func (ignoreInbound) HandleOversize(int64)                       {}

// reactingRuntime records the lines written to the runtime and, before a
// write returns, lets react see each: a runtime whose reaction to a line
// reaches acpdrive before its writer goes on.
type reactingRuntime struct {
	mu    sync.Mutex
	lines []string
	react func(line string)
}

func (w *reactingRuntime) Write(p []byte) (int, error) {
	line := strings.TrimSpace(string(p))
	w.mu.Lock()
	w.lines = append(w.lines, line)
	w.mu.Unlock()
	w.react(line)
	return len(p), nil
}

func (w *reactingRuntime) cancelled() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var ids []string
	for _, l := range w.lines {
		var m struct {
			Method string `json:"method"`
			Params struct {
				SessionID string `json:"sessionId"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(l), &m) == nil && m.Method == "session/cancel" {
			ids = append(ids, m.Params.SessionID)
		}
	}
	return ids
}

// TestCancelNamesChildrenWorkingWhenDecided: cancelling the parent's turn
// cancels every child working when the cancel is decided, even when the
// runtime reports the child idle in answer to the parent's session/cancel
// before acpdrive writes the child's
// (docs/behaviour.md#sessions-as-resources-and-child-sessions).
func TestCancelNamesChildrenWorkingWhenDecided(t *testing.T) {
	t.Parallel()
	r := withChildren(newRecordingStream(t))
	r.send(announce("child-1", "running"))
	r.send(announce("child-2", "requires_action"))
	r.send(announce("child-done", "running"))
	r.send(`{"sessionUpdate":"subagent_update","sessionId":"child-done","state":{"state":"idle","stopReason":"end_turn"}}`)

	w := &reactingRuntime{react: func(line string) {
		if strings.Contains(line, `"session/cancel"`) && strings.Contains(line, `"s-1"`) {
			// The runtime ends its children as it reads the parent's cancel.
			r.send(`{"sessionUpdate":"subagent_update","sessionId":"child-1","state":{"state":"idle","stopReason":"cancelled"}}`)
			r.send(`{"sessionUpdate":"subagent_update","sessionId":"child-2","state":{"state":"idle","stopReason":"cancelled"}}`)
		}
	}}
	in, out := io.Pipe()
	conn := jsonrpc.NewConn(in, w, ignoreInbound{}, jsonrpc.Options{})
	t.Cleanup(func() {
		_ = conn.Close()
		_ = out.Close()
		conn.Wait()
	})
	p := promptWire{rt: &runtime{conn: conn, client: acpclient.New(conn)}, log: r.log, kids: r.kids}

	require.NoError(t, p.cancel(context.Background(), "s-1"))
	assert.Equal(t, []string{"s-1", "child-1", "child-2"}, w.cancelled(),
		"the parent first, then every child working when the cancel was decided; an ended child is not named")
}
