package netdial

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/internal/netwire"
)

// resumeServer is a WebSocket server that advertises the resume, sends
// two messages after the initialize answer and drops the socket; a
// socket naming the connection is handed to again (which gets the
// stream/resume request's cursor).
func resumeServer(t *testing.T, again func(c *websocket.Conn, cursor string)) string {
	t.Helper()
	var wg sync.WaitGroup
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wg.Add(1)
		defer wg.Done()
		ctx := context.Background()
		conn := r.Header.Get(netwire.HeaderConnection)
		w.Header().Set(netwire.HeaderConnection, "c1")
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		if conn != "" {
			assert.Equal(t, "c1", conn)
			_, first, err := c.Read(ctx)
			if err != nil {
				return
			}
			var req struct {
				Method string `json:"method"`
				Params struct {
					Cursor string `json:"cursor"`
				} `json:"params"`
			}
			assert.NoError(t, json.Unmarshal(first, &req))
			assert.Equal(t, netwire.ResumeMethod, req.Method)
			again(c, req.Params.Cursor)
			return
		}
		if _, _, err := c.Read(ctx); err != nil { // initialize
			return
		}
		answer := netwire.AddResumable([]byte(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}`), netwire.Retention{Messages: 9, Seconds: 9})
		for seq, msg := range []string{string(answer), `{"jsonrpc":"2.0","method":"n","params":{}}`, `{"jsonrpc":"2.0","method":"n","params":{"x":1}}`} {
			_ = c.Write(ctx, websocket.MessageText, netwire.AddCursor(nil, []byte(msg), int64(seq)))
		}
		// dropped: CloseNow without a close frame
	}))
	t.Cleanup(func() { srv.Close(); wg.Wait() })
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/acp"
}

// TestWebSocketResume: a dropped socket is replaced by one naming the
// connection whose first frame is stream/resume with the last cursor;
// what comes after is read on, nothing twice.
func TestWebSocketResume(t *testing.T) {
	url := resumeServer(t, func(c *websocket.Conn, cursor string) {
		assert.Equal(t, "2", cursor)
		ctx := context.Background()
		_ = c.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":"acpdrive-resume","result":{}}`))
		_ = c.Write(ctx, websocket.MessageText, netwire.AddCursor(nil, []byte(`{"jsonrpc":"2.0","method":"n","params":{"y":2}}`), 3))
		_ = c.Close(websocket.StatusNormalClosure, "")
	})
	p, err := start(t, Options{URL: url})
	require.NoError(t, err)
	_, err = p.Stdin().Write([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}` + "\n"))
	require.NoError(t, err)
	var got []string
	sc := bufio.NewScanner(p.Stdout())
	for sc.Scan() {
		got = append(got, sc.Text())
	}
	require.NoError(t, sc.Err(), "the server's normal close is the stream's end")
	require.Len(t, got, 4, "nothing lost, nothing twice")
	_, ok := netwire.Resumable([]byte(got[0]))
	assert.True(t, ok, got[0])
	assert.Equal(t, []string{`{"jsonrpc":"2.0","method":"n","params":{}}`, `{"jsonrpc":"2.0","method":"n","params":{"x":1}}`,
		`{"jsonrpc":"2.0","method":"n","params":{"y":2}}`}, got[1:], "in order, the cursors taken out")
	<-p.Exited()
	assert.Equal(t, 0, p.Exit().Code)
	require.NoError(t, p.Release())
}

// TestWebSocketResumeRefused: stream/resume_failed ends the process with
// its reason, at once.
func TestWebSocketResumeRefused(t *testing.T) {
	url := resumeServer(t, func(c *websocket.Conn, cursor string) {
		_ = c.Write(context.Background(), websocket.MessageText, netwire.ResumeFailed("the messages after cursor "+cursor+" are no longer held"))
		_ = c.Close(websocket.StatusNormalClosure, "")
	})
	p, err := start(t, Options{URL: url})
	require.NoError(t, err)
	_, err = p.Stdin().Write([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}` + "\n"))
	require.NoError(t, err)
	sc := bufio.NewScanner(p.Stdout())
	n := 0
	for sc.Scan() {
		n++
	}
	assert.Error(t, sc.Err())
	assert.Equal(t, 3, n)
	<-p.Exited()
	assert.Equal(t, -1, p.Exit().Code)
	assert.Equal(t, "the connection to the runtime broke: "+MsgResumeFailed+": the messages after cursor 2 are no longer held", p.Exit().Message)
	require.NoError(t, p.Release())
}

// TestWebSocketResumeSendsAgainWhatWasLost: a message of the client that
// the server read but did not hand on before the drop (as one lost in
// flight) is sent again on the resumed socket, after the server's count,
// once and in order with the ones written later.
func TestWebSocketResumeSendsAgainWhatWasLost(t *testing.T) {
	resumed := make(chan []string, 1)
	var wg sync.WaitGroup
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wg.Add(1)
		defer wg.Done()
		ctx := context.Background()
		conn := r.Header.Get(netwire.HeaderConnection)
		w.Header().Set(netwire.HeaderConnection, "c1")
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		if conn == "" {
			if _, _, err := c.Read(ctx); err != nil { // initialize
				return
			}
			answer := netwire.AddResumable([]byte(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}`), netwire.Retention{Messages: 9, Seconds: 9})
			_ = c.Write(ctx, websocket.MessageText, netwire.AddCursor(nil, answer, 0))
			for range 2 { // a1 handed on, a2 lost
				if _, _, err := c.Read(ctx); err != nil {
					return
				}
			}
			return // dropped without a close frame
		}
		if _, _, err := c.Read(ctx); err != nil { // stream/resume
			return
		}
		_ = c.Write(ctx, websocket.MessageText, netwire.ResumeAnswer(json.RawMessage(`"`+netwire.ResumeRequestID+`"`), 2))
		var got []string
		for len(got) < 2 {
			_, msg, err := c.Read(ctx)
			if err != nil {
				break
			}
			got = append(got, string(msg))
		}
		resumed <- got
		_ = c.Close(websocket.StatusNormalClosure, "")
	}))
	t.Cleanup(func() { srv.Close(); wg.Wait() })

	p, err := start(t, Options{URL: "ws" + strings.TrimPrefix(srv.URL, "http") + "/acp"})
	require.NoError(t, err)
	write := func(line string) {
		_, err := p.Stdin().Write([]byte(line + "\n"))
		require.NoError(t, err)
	}
	write(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`)
	sc := bufio.NewScanner(p.Stdout())
	require.True(t, sc.Scan(), "the initialize answer")
	read := make(chan struct{})
	go func() { // the drop is noticed, and the socket resumed, by the reader
		defer close(read)
		for sc.Scan() {
		}
	}()
	write(`{"jsonrpc":"2.0","method":"a1"}`)
	write(`{"jsonrpc":"2.0","method":"a2"}`)
	write(`{"jsonrpc":"2.0","method":"a3"}`)
	assert.Equal(t, []string{`{"jsonrpc":"2.0","method":"a2"}`, `{"jsonrpc":"2.0","method":"a3"}`}, <-resumed,
		"what the server did not hand on, then the rest, each once")
	<-read
	<-p.Exited()
	require.NoError(t, p.Release())
}
