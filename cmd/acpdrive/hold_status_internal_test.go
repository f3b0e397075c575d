package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/linewatch"
)

// TestStatusRecorder: the holder's record follows prompts and their
// answers, read from the runtime's output however it is split into
// reads; other messages change nothing (docs/behaviour.md#held-sessions).
func TestStatusRecorder(t *testing.T) {
	const (
		prompt1 = `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s","prompt":[]}}` + "\n"
		prompt2 = `{"jsonrpc":"2.0","id":"p-4","method":"session/prompt","params":{"sessionId":"s","prompt":[]}}` + "\n"
		update  = `{"jsonrpc":"2.0","method":"session/update","params":{"update":{"text":"{\"id\":3,\"result\":{\"stopReason\":\"x\"}}"}}}` + "\n"
		other   = `{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}` + "\n"
		answer1 = `{"jsonrpc":"2.0","id":3,"result":{"stopReason":"cancelled"}}` + "\n"
		failed2 = `{"jsonrpc":"2.0","id":"p-4","error":{"code":-32603,"message":"boom"}}` + "\n"
	)
	cases := []struct {
		name     string
		sent     []string
		received string
		turn     string
		last     string
	}{
		{"no prompt", nil, update + other, "", ""},
		{"a prompt unanswered", []string{prompt1}, update + other, turnRunning, ""},
		{"a prompt answered", []string{prompt1}, update + answer1, turnIdle, "cancelled"},
		{"one of two answered", []string{prompt1, prompt2}, answer1, turnRunning, "cancelled"},
		{"both answered, one with an error", []string{prompt1, prompt2}, answer1 + update + failed2, turnIdle, "error"},
	}
	for _, c := range cases {
		for _, size := range []int{1, 7, 64, 1 << 16} {
			dir := t.TempDir()
			rec := newStatusRecorder(dir, []string{"agent", "--x"})
			for _, s := range c.sent {
				rec.sent([]byte(s))
			}
			w := linewatch.NewReader(strings.NewReader(c.received), rec.hooks())
			buf := make([]byte, size)
			for {
				if _, err := w.Read(buf); err != nil {
					break
				}
			}
			b, err := os.ReadFile(filepath.Join(dir, holdStatusFile))
			require.NoError(t, err)
			var st holdStatus
			require.NoError(t, json.Unmarshal(b, &st))
			assert.Equal(t, c.turn, st.Turn, "%s, reads of %d", c.name, size)
			assert.Equal(t, c.last, st.LastStopReason, "%s, reads of %d", c.name, size)
			assert.Equal(t, []string{"agent", "--x"}, st.Runtime)
		}
	}
}
