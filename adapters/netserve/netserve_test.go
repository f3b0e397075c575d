package netserve

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/internal/netwire"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// echoLauncher starts echo runtimes: a request is answered
// {"echo": method}, any other line written back prefixed "echo ", and the
// runtime exits when its standard input ends.
type echoLauncher struct {
	started, killed atomic.Int32
}

func (l *echoLauncher) Prepare(ports.LaunchRequest) (ports.Plan, error) { return l, nil }
func (l *echoLauncher) Target() ports.Target                            { return ports.Target{} }

func (l *echoLauncher) Start(context.Context, []string) (ports.Process, error) {
	l.started.Add(1)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &echoProc{l: l, in: inW, out: outR, exited: make(chan struct{})}
	go func() {
		defer close(p.exited)
		defer outW.Close()
		sc := bufio.NewScanner(inR)
		for sc.Scan() {
			out := "echo " + sc.Text()
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(sc.Bytes(), &req) == nil && req.Method != "" && len(req.ID) > 0 {
				out = `{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"echo":"` + req.Method + `"}}`
			}
			if _, err := outW.Write([]byte(out + "\n")); err != nil {
				return
			}
		}
	}()
	p.stopIn = func() { _ = inR.Close() }
	return p, nil
}

type echoProc struct {
	l      *echoLauncher
	in     *io.PipeWriter
	out    *io.PipeReader
	stopIn func()
	exited chan struct{}
	once   sync.Once
}

func (p *echoProc) Identity() ports.Identity   { return ports.Identity{PID: 1} }
func (p *echoProc) Stdin() io.WriteCloser      { return p.in }
func (p *echoProc) Stdout() io.Reader          { return p.out }
func (p *echoProc) Terminate() error           { p.stopIn(); return nil }
func (p *echoProc) Kill() error                { p.once.Do(func() { p.l.killed.Add(1); p.stopIn() }); return nil }
func (p *echoProc) Exited() <-chan struct{}    { return p.exited }
func (p *echoProc) Exit() domain.ExitStatus    { return domain.ExitStatus{Exited: true} }
func (p *echoProc) CloseStdout() error         { return p.out.Close() }
func (p *echoProc) StderrTail() ([]byte, bool) { return nil, false }
func (p *echoProc) Release() error             { <-p.exited; return nil }

// serve listens at listen and serves until the test ends.
func serve(t *testing.T, listen, token string) (*Server, *echoLauncher) {
	t.Helper()
	return serveWith(t, Options{Listen: listen, Token: token})
}

// serveWith serves o (with an echo launcher) until the test ends.
func serveWith(t *testing.T, o Options) (*Server, *echoLauncher) {
	t.Helper()
	l := &echoLauncher{}
	o.Command, o.Workspace, o.Launcher = []string{"echo"}, "/", l
	s, err := Listen(o)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() { cancel(); assert.NoError(t, <-done) })
	return s, l
}

func dialTCP(t *testing.T, url string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "tcp://"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c, bufio.NewReader(c)
}

// TestStreamForwardsBothWays: lines go to the runtime and back; the
// client's half close ends the runtime's input, and its exit ends the
// link.
func TestStreamForwardsBothWays(t *testing.T) {
	s, l := serve(t, "tcp://127.0.0.1:0", "")
	c, r := dialTCP(t, s.URL())
	_, err := c.Write([]byte("{\"a\":1}\n{\"b\":2}\n"))
	require.NoError(t, err)
	require.NoError(t, c.(*net.TCPConn).CloseWrite())
	out, err := io.ReadAll(r)
	require.NoError(t, err)
	assert.Equal(t, "echo {\"a\":1}\necho {\"b\":2}\n", string(out))
	assert.Equal(t, int32(1), l.started.Load())
}

// TestStreamToken: without the token request the first request is
// answered CodeUnauthorized; a wrong token is refused; neither starts a
// runtime.
func TestStreamToken(t *testing.T) {
	s, l := serve(t, "tcp://127.0.0.1:0", "s3cret")
	for _, tc := range []struct{ first, want string }{
		{`{"jsonrpc":"2.0","id":0,"method":"initialize"}`, netwire.MsgTokenRequired},
		{strings.TrimSpace(string(netwire.TokenRequest("wrong"))), netwire.MsgTokenRefused},
	} {
		c, r := dialTCP(t, s.URL())
		_, err := c.Write([]byte(tc.first + "\n"))
		require.NoError(t, err)
		out, _ := io.ReadAll(r)
		assert.Contains(t, string(out), `"code":-32001`)
		assert.Contains(t, string(out), tc.want)
	}
	assert.Equal(t, int32(0), l.started.Load())

	c, r := dialTCP(t, s.URL())
	_, err := c.Write(append(netwire.TokenRequest("s3cret"), []byte("x\n")...))
	require.NoError(t, err)
	ok, err := r.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, string(netwire.Answer([]byte(`"acpdrive-token"`), "")), ok)
	echo, err := r.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "echo x\n", echo)
}

func TestListenRefuses(t *testing.T) {
	for _, listen := range []string{"tcp://0.0.0.0:0", "http://10.0.0.1:0"} {
		_, err := Listen(Options{Listen: listen, Command: []string{"x"}, Launcher: &echoLauncher{}})
		assert.ErrorIs(t, err, ErrTokenRequired, listen)
	}
	_, err := Listen(Options{Listen: "ws://127.0.0.1:0", Command: []string{"x"}, Launcher: &echoLauncher{}})
	assert.ErrorContains(t, err, "cannot listen at")
	_, err = Listen(Options{Listen: "tcp://127.0.0.1:0", Launcher: &echoLauncher{}})
	assert.ErrorContains(t, err, "no runtime command")
}

// TestWebSocket: the token on the upgrade, frames both ways, and the
// server's end ends the runtime.
func TestWebSocket(t *testing.T) {
	s, l := serve(t, "http://127.0.0.1:0", "s3cret")
	url := s.URL()
	require.True(t, strings.HasPrefix(url, "http://127.0.0.1:") && strings.HasSuffix(url, "/acp"), url)
	ws := "ws" + strings.TrimPrefix(url, "http")
	ctx := context.Background()

	_, resp, err := websocket.Dial(ctx, ws, nil)
	require.Error(t, err)
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	c, _, err := websocket.Dial(ctx, ws, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer s3cret"}}})
	require.NoError(t, err)
	defer c.CloseNow()
	require.NoError(t, c.Write(ctx, websocket.MessageText, []byte(`{"a":1}`)))
	typ, msg, err := c.Read(ctx)
	require.NoError(t, err)
	assert.Equal(t, websocket.MessageText, typ)
	assert.Equal(t, `echo {"a":1}`, string(msg))
	require.NoError(t, c.Close(websocket.StatusNormalClosure, ""))
	assert.Eventually(t, func() bool { return l.killed.Load() == 1 }, 5e9, 1e7, "the runtime is torn down")
}

// TestStreamableHTTP: initialize answered on its POST with the
// connection id; later messages accepted (202) and answered on the event
// stream, numbered; a stream reopened with Last-Event-ID gets what it
// missed, one asking for what is gone gets 409; DELETE ends the runtime.
func TestStreamableHTTP(t *testing.T) {
	s, l := serve(t, "http://127.0.0.1:0", "s3cret")
	url := s.URL()
	do := func(method, conn, last, body string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer s3cret")
		if conn != "" {
			req.Header.Set(netwire.HeaderConnection, conn)
		}
		if last != "" {
			req.Header.Set(netwire.HeaderLastEventID, last)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		return resp
	}
	status := func(resp *http.Response) int { _ = resp.Body.Close(); return resp.StatusCode }

	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize"}`))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnauthorized, status(resp), "no token")
	assert.Equal(t, http.StatusBadRequest, status(do(http.MethodPost, "", "", `{"jsonrpc":"2.0","id":1,"method":"session/new"}`)))
	assert.Equal(t, http.StatusNotFound, status(do(http.MethodPost, "nope", "", `{}`)))

	resp = do(http.MethodPost, "", "", `{"jsonrpc":"2.0","id":0,"method":"initialize"}`)
	conn := resp.Header.Get(netwire.HeaderConnection)
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NotEmpty(t, conn)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":0,"result":{"echo":"initialize",
		"capabilities":{"transport":{"resumable":{"retentionMessages":4096,"retentionSeconds":120}}}}}`, string(body),
		"the resume is advertised beside the runtime's own answer")

	keyed := func(key, body string) int {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer s3cret")
		req.Header.Set(netwire.HeaderConnection, conn)
		req.Header.Set(netwire.HeaderIdempotencyKey, key)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		return status(resp)
	}
	assert.Equal(t, http.StatusAccepted, keyed("k-1", `{"jsonrpc":"2.0","id":1,"method":"a"}`))
	assert.Equal(t, http.StatusAccepted, keyed("k-2", `{"jsonrpc":"2.0","id":2,"method":"b"}`))
	assert.Equal(t, http.StatusAccepted, keyed("k-2", `{"jsonrpc":"2.0","id":2,"method":"b"}`),
		"an attempt sent again is answered as done, and not handed on")
	events := func(last string, n int) []netwire.Event {
		t.Helper()
		resp := do(http.MethodGet, conn, last, "")
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		br := bufio.NewReader(resp.Body)
		var got []netwire.Event
		for len(got) < n {
			ev, err := netwire.ReadEvent(br)
			require.NoError(t, err)
			got = append(got, ev)
		}
		return got
	}
	first := events("", 2)
	assert.Equal(t, "0", first[0].ID)
	assert.Equal(t, `{"jsonrpc":"2.0","id":1,"result":{"_meta":{"acp/cursor":"0"},"echo":"a"}}`, string(first[0].Data),
		"the cursor is in _meta too")
	assert.Equal(t, "1", first[1].ID)
	again := events("0", 1)
	assert.Equal(t, netwire.Event{ID: "1", Data: first[1].Data}, again[0], "resumed after event 0")
	assert.Equal(t, http.StatusConflict, status(do(http.MethodGet, conn, "99", "")))
	assert.Equal(t, http.StatusAccepted, status(do(http.MethodPost, conn, "", `{"jsonrpc":"2.0","id":3,"method":"c"}`)))
	assert.Equal(t, `{"jsonrpc":"2.0","id":3,"result":{"_meta":{"acp/cursor":"2"},"echo":"c"}}`, string(events("1", 1)[0].Data),
		"b reached the runtime once")

	// A session's own stream is held open, empty, until the connection
	// ends.
	sreq, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	sreq.Header.Set("Authorization", "Bearer s3cret")
	sreq.Header.Set(netwire.HeaderConnection, conn)
	sreq.Header.Set(netwire.HeaderSession, "sess-1")
	sresp, err := http.DefaultClient.Do(sreq)
	require.NoError(t, err)
	defer sresp.Body.Close()
	assert.Equal(t, http.StatusOK, sresp.StatusCode)
	assert.Equal(t, "text/event-stream", sresp.Header.Get("Content-Type"))

	assert.Equal(t, http.StatusNoContent, status(do(http.MethodDelete, conn, "", "")))
	rest, err := io.ReadAll(sresp.Body)
	assert.NoError(t, err)
	assert.Empty(t, rest, "nothing came on the session's stream, which ended with the connection")
	assert.Eventually(t, func() bool { return l.killed.Load() == 1 }, 5e9, 1e7, "the runtime is torn down")
	assert.Equal(t, http.StatusNotFound, status(do(http.MethodPost, conn, "", `{}`)))
}

// TestStreamableHTTPAbandoned: a connection with no stream open and no
// request for AbandonAfter is ended with its runtime.
func TestStreamableHTTPAbandoned(t *testing.T) {
	s, l := serveWith(t, Options{Listen: "http://127.0.0.1:0", AbandonAfter: 50 * time.Millisecond})
	resp, err := http.Post(s.URL(), "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize"}`))
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Eventually(t, func() bool { return l.killed.Load() == 1 }, 5*time.Second, 10*time.Millisecond, "the abandoned runtime is ended")
}

// TestWebSocketResume: every message carries its cursor; a socket that
// drops is replaced by one naming the connection whose first frame is
// stream/resume, and the messages after the cursor come again, once; a
// cursor no longer held, an unknown connection or another first message
// get stream/resume_failed; a connection left without a socket for
// AbandonAfter ends with its runtime.
func TestWebSocketResume(t *testing.T) {
	s, l := serveWith(t, Options{Listen: "http://127.0.0.1:0", Retention: 2, AbandonAfter: time.Hour})
	ws := "ws" + strings.TrimPrefix(s.URL(), "http")
	ctx := context.Background()
	dial := func(conn string) *websocket.Conn {
		t.Helper()
		h := http.Header{}
		if conn != "" {
			h.Set(netwire.HeaderConnection, conn)
		}
		c, resp, err := websocket.Dial(ctx, ws, &websocket.DialOptions{HTTPHeader: h})
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.CloseNow() })
		if conn == "" {
			conn = resp.Header.Get(netwire.HeaderConnection)
		}
		require.NotEmpty(t, conn)
		return c
	}
	send := func(c *websocket.Conn, msg string) {
		require.NoError(t, c.Write(ctx, websocket.MessageText, []byte(msg)))
	}
	recv := func(c *websocket.Conn) string {
		_, msg, err := c.Read(ctx)
		require.NoError(t, err)
		return string(msg)
	}

	h := http.Header{}
	c, resp, err := websocket.Dial(ctx, ws, &websocket.DialOptions{HTTPHeader: h})
	require.NoError(t, err)
	conn := resp.Header.Get(netwire.HeaderConnection)
	require.NotEmpty(t, conn)
	send(c, `{"jsonrpc":"2.0","id":0,"method":"initialize"}`)
	init := recv(c)
	r, ok := netwire.Resumable([]byte(init))
	require.True(t, ok, init)
	assert.Equal(t, netwire.Retention{Messages: 2, Seconds: 3600}, r)
	assert.Equal(t, "0", netwire.Cursor([]byte(init)))
	send(c, `{"jsonrpc":"2.0","id":1,"method":"a"}`)
	assert.Equal(t, `{"jsonrpc":"2.0","id":1,"result":{"_meta":{"acp/cursor":"1"},"echo":"a"}}`, recv(c))
	send(c, `{"jsonrpc":"2.0","id":2,"method":"b"}`)
	_ = c.CloseNow() // dropped before reading b's answer

	c2 := dial(conn)
	send(c2, string(netwire.ResumeRequest("1")))
	// Whether b reached the runtime before the drop is the drop's timing:
	// the answer counts the client's messages that did (initialize, a,
	// and b or not), and the client sends the rest again, as acpdrive's
	// client does.
	var answer struct {
		ID     string `json:"id"`
		Result struct {
			Received int64 `json:"received"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(recv(c2)), &answer))
	assert.Equal(t, netwire.ResumeRequestID, answer.ID)
	require.Contains(t, []int64{2, 3}, answer.Result.Received)
	if answer.Result.Received == 2 {
		send(c2, `{"jsonrpc":"2.0","id":2,"method":"b"}`)
	}
	assert.Equal(t, `{"jsonrpc":"2.0","id":2,"result":{"_meta":{"acp/cursor":"2"},"echo":"b"}}`, recv(c2), "what was missed, once")
	send(c2, `{"jsonrpc":"2.0","id":3,"method":"c"}`)
	assert.Equal(t, "3", netwire.Cursor([]byte(recv(c2))), "then the live messages")
	send(c2, `{"jsonrpc":"2.0","id":4,"method":"d"}`)
	send(c2, `{"jsonrpc":"2.0","id":5,"method":"e"}`)
	assert.Equal(t, "4", netwire.Cursor([]byte(recv(c2))))
	assert.Equal(t, "5", netwire.Cursor([]byte(recv(c2))))
	_ = c2.CloseNow()

	for name, tc := range map[string]struct{ conn, first, reason string }{
		"cursor gone":  {conn, string(netwire.ResumeRequest("0")), "the messages after cursor 0 are no longer held"},
		"unknown":      {"nope", string(netwire.ResumeRequest("0")), "the connection is no longer held"},
		"not a resume": {conn, `{"jsonrpc":"2.0","id":9,"method":"x"}`, "the first message of a resumed connection must be stream/resume"},
	} {
		c := dial(tc.conn)
		send(c, tc.first)
		assert.JSONEq(t, string(netwire.ResumeFailed(tc.reason)), recv(c), name)
		_, _, err := c.Read(ctx)
		assert.Equal(t, websocket.StatusNormalClosure, websocket.CloseStatus(err), name)
	}
	assert.Equal(t, int32(0), l.killed.Load(), "a drop does not end the runtime")

	c3 := dial(conn)
	send(c3, string(netwire.ResumeRequest("5")))
	assert.Equal(t, `{"jsonrpc":"2.0","id":"acpdrive-resume","result":{"received":6}}`, recv(c3))
	require.NoError(t, c3.Close(websocket.StatusNormalClosure, ""))
	assert.Eventually(t, func() bool { return l.killed.Load() == 1 }, 5*time.Second, 10*time.Millisecond, "the client's close ends the runtime")
}

// TestWebSocketAbandoned: a connection whose socket dropped and was not
// resumed within AbandonAfter ends with its runtime, and can no longer
// be resumed.
func TestWebSocketAbandoned(t *testing.T) {
	s, l := serveWith(t, Options{Listen: "http://127.0.0.1:0", AbandonAfter: 50 * time.Millisecond})
	ws := "ws" + strings.TrimPrefix(s.URL(), "http")
	ctx := context.Background()
	c, resp, err := websocket.Dial(ctx, ws, nil)
	require.NoError(t, err)
	conn := resp.Header.Get(netwire.HeaderConnection)
	_ = c.CloseNow()
	assert.Eventually(t, func() bool { return l.killed.Load() == 1 }, 5*time.Second, 10*time.Millisecond, "the abandoned runtime is ended")
	c, _, err = websocket.Dial(ctx, ws, &websocket.DialOptions{HTTPHeader: http.Header{netwire.HeaderConnection: {conn}}})
	require.NoError(t, err)
	defer c.CloseNow()
	require.NoError(t, c.Write(ctx, websocket.MessageText, netwire.ResumeRequest("")))
	_, msg, err := c.Read(ctx)
	require.NoError(t, err)
	assert.Contains(t, string(msg), netwire.ResumeFailedMethod)
}
