package netdial

import (
	"bufio"
	"context"
	"testing"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/internal/netwire"
	"github.com/acpdrive/acpdrive/domain"
)

// TestWebSocketResumeFirst: with Options.Resume the first socket already
// names the connection and asks for the messages after the given cursor
// (docs/behaviour.md#held-sessions); a refusal fails the start.
func TestWebSocketResumeFirst(t *testing.T) {
	for _, tc := range []struct {
		name, cursor string
		refuse       bool
	}{
		{"from the first held message", "", false},
		{"after a cursor", "4", false},
		{"refused", "4", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := resumeServer(t, func(c *websocket.Conn, cursor string) {
				assert.Equal(t, tc.cursor, cursor)
				ctx := context.Background()
				if tc.refuse {
					_ = c.Write(ctx, websocket.MessageText, netwire.ResumeFailed("the connection is no longer held"))
					_ = c.Close(websocket.StatusNormalClosure, "")
					return
				}
				_ = c.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":"acpdrive-resume","result":{}}`))
				_ = c.Write(ctx, websocket.MessageText, netwire.AddCursor(nil, []byte(`{"jsonrpc":"2.0","method":"n","params":{"y":5}}`), 5))
				_ = c.Close(websocket.StatusNormalClosure, "")
			})
			p, err := start(t, Options{URL: url, Resume: &Resume{Connection: "c1", Cursor: tc.cursor}})
			if tc.refuse {
				var ae *domain.AgentError
				require.ErrorAs(t, err, &ae)
				assert.Equal(t, domain.KindPortExit, ae.Kind)
				assert.Contains(t, ae.Message, MsgResumeFailed+": the connection is no longer held")
				return
			}
			require.NoError(t, err)
			var got []string
			sc := bufio.NewScanner(p.Stdout())
			for sc.Scan() {
				got = append(got, sc.Text())
			}
			require.NoError(t, sc.Err())
			assert.Equal(t, []string{`{"jsonrpc":"2.0","method":"n","params":{"y":5}}`}, got, "no handshake of its own: the held messages only")
			<-p.Exited()
			require.NoError(t, p.Release())
		})
	}
}
