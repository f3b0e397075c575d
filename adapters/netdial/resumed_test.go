package netdial

import (
	"context"
	"io"
	"testing"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/ports"
)

// TestResumedReceived: a link started with Options.Resume reports the
// count the server's stream/resume answer gave, and none when the answer
// gave none (docs/behaviour.md#held-sessions).
func TestResumedReceived(t *testing.T) {
	for _, tc := range []struct {
		name, result string
		want         int64
		ok           bool
	}{
		{"counted", `{"received":7}`, 7, true},
		{"no count", `{}`, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := resumeServer(t, func(c *websocket.Conn, _ string) {
				ctx := context.Background()
				_ = c.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":"acpdrive-resume","result":`+tc.result+`}`))
				_ = c.Close(websocket.StatusNormalClosure, "")
			})
			p, err := start(t, Options{URL: url, Resume: &Resume{Connection: "c1"}})
			require.NoError(t, err)
			r, isResumed := p.(ports.Resumed)
			require.True(t, isResumed)
			n, ok := r.ResumedReceived()
			assert.Equal(t, tc.want, n)
			assert.Equal(t, tc.ok, ok)
			_, _ = io.Copy(io.Discard, p.Stdout())
			<-p.Exited()
			require.NoError(t, p.Release())
		})
	}
}
