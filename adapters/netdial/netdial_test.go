package netdial

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/internal/netwire"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// server accepts one tcp connection and hands it to serve, in a
// goroutine the test awaits.
func server(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		serve(c)
	}()
	t.Cleanup(func() { _ = ln.Close(); <-done })
	return "tcp://" + ln.Addr().String()
}

func start(t *testing.T, o Options) (ports.Process, error) {
	t.Helper()
	l, err := New(o)
	require.NoError(t, err)
	plan, err := l.Prepare(ports.LaunchRequest{Workspace: "/srv/work"})
	require.NoError(t, err)
	assert.True(t, plan.Target().Remote(), "a runtime at a URL is remote")
	return plan.Start(context.Background(), nil)
}

func TestNewRefuses(t *testing.T) {
	for _, tc := range []struct{ url, ca, want string }{
		{"ftp://h:1", "", `scheme "ftp"`},
		{"ws://127.0.0.1:1/acp", "no-such-file.pem", "CA file"},
	} {
		_, err := New(Options{URL: tc.url, CAFile: tc.ca})
		require.Error(t, err, tc.url)
		assert.Contains(t, err.Error(), tc.want)
		assert.Equal(t, domain.ReasonConfigurationInvalid, domain.ReasonOf(err))
	}
}

func TestPrepare(t *testing.T) {
	l, err := New(Options{URL: "tcp://127.0.0.1:1"})
	require.NoError(t, err)
	_, err = l.Prepare(ports.LaunchRequest{Workspace: "relative"})
	assert.ErrorIs(t, err, domain.KindInvalidWorkspaceCWD)
	_, err = l.Prepare(ports.LaunchRequest{Workspace: "/w", Sandbox: domain.Sandbox{Enabled: true}})
	assert.ErrorIs(t, err, domain.KindAgentNotFound)
	assert.Equal(t, domain.ReasonNotOffered, domain.ReasonOf(err))
}

// TestStreamEndsWithTheServer: what the server writes is read, and its
// close ends the "process" with its words.
func TestStreamEndsWithTheServer(t *testing.T) {
	got := make(chan string, 1)
	url := server(t, func(c net.Conn) {
		line, _ := bufio.NewReader(c).ReadString('\n')
		got <- line
		_, _ = c.Write([]byte("{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}\n"))
	})
	p, err := start(t, Options{URL: url})
	require.NoError(t, err)
	_, err = p.Stdin().Write([]byte("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\"}\n"))
	require.NoError(t, err)
	out, err := io.ReadAll(p.Stdout())
	require.NoError(t, err)
	assert.Equal(t, "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}\n", string(out))
	assert.Equal(t, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\"}\n", <-got)
	<-p.Exited()
	assert.Equal(t, domain.ExitStatus{Exited: true, Code: 0, Message: "the server closed the connection"}, p.Exit())
	assert.Equal(t, ports.Identity{Host: url}, p.Identity())
	require.NoError(t, p.Release())
}

// TestTerminateEndsTheRead: a read in progress returns once this side
// ends the link, and the end is said to be acpdrive's.
func TestTerminateEndsTheRead(t *testing.T) {
	hold := make(chan struct{})
	url := server(t, func(net.Conn) { <-hold })
	defer close(hold)
	p, err := start(t, Options{URL: url})
	require.NoError(t, err)
	read := make(chan error, 1)
	go func() { _, err := p.Stdout().Read(make([]byte, 10)); read <- err }()
	require.NoError(t, p.Terminate())
	assert.Error(t, <-read)
	<-p.Exited()
	assert.Equal(t, "the connection was closed by acpdrive", p.Exit().Message)
	require.NoError(t, p.Kill())
	require.NoError(t, p.Release())
}

// TestStreamToken: the token goes first, and a refusal names the
// variable, never the token.
func TestStreamToken(t *testing.T) {
	for _, tc := range []struct{ name, presented, wantErr string }{
		{"accepted", "right", ""},
		{"refused", "wrong", MsgTokenRefused + " held in ACP_TOKEN (" + netwire.MsgTokenRefused + ")"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := server(t, func(c net.Conn) {
				line, _ := netwire.ReadLine(bufio.NewReader(c))
				msg := ""
				if !strings.Contains(string(line), `"token":"right"`) {
					msg = netwire.MsgTokenRefused
				}
				_, _ = c.Write(netwire.Answer([]byte(`"acpdrive-token"`), msg))
			})
			p, err := start(t, Options{URL: url, TokenEnv: "ACP_TOKEN", Getenv: func(string) string { return tc.presented }})
			if tc.wantErr == "" {
				require.NoError(t, err)
				require.NoError(t, p.Release())
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, domain.KindPortExit)
			assert.Contains(t, err.Error(), tc.wantErr)
			assert.NotContains(t, err.Error(), tc.presented)
		})
	}
	_, err := start(t, Options{URL: "tcp://127.0.0.1:1", TokenEnv: "ACP_TOKEN", Getenv: func(string) string { return "" }})
	require.Error(t, err)
	assert.Contains(t, err.Error(), MsgTokenUnset+": ACP_TOKEN")
}

// TestWebSocket: one message per text frame either way; a 401 names the
// variable.
func TestWebSocket(t *testing.T) {
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer right" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		defer close(done)
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		for range 2 {
			typ, msg, err := c.Read(context.Background())
			if err != nil {
				return
			}
			_ = c.Write(context.Background(), typ, append([]byte("echo "), msg...))
		}
		_ = c.Close(websocket.StatusNormalClosure, "")
	}))
	defer srv.Close()
	url := "ws" + strings.TrimPrefix(srv.URL, "http") + "/acp"

	_, err := start(t, Options{URL: url, TokenEnv: "WS_TOKEN", Getenv: func(string) string { return "wrong" }})
	require.Error(t, err)
	assert.Contains(t, err.Error(), MsgTokenRefused+" held in WS_TOKEN (401 Unauthorized)")

	p, err := start(t, Options{URL: url, TokenEnv: "WS_TOKEN", Getenv: func(string) string { return "right" }})
	require.NoError(t, err)
	_, err = p.Stdin().Write([]byte("one\ntw"))
	require.NoError(t, err)
	_, err = p.Stdin().Write([]byte("o\n"))
	require.NoError(t, err)
	out, err := io.ReadAll(p.Stdout())
	require.NoError(t, err, "a normal close is the stream's end")
	assert.Equal(t, "echo one\necho two\n", string(out))
	<-p.Exited()
	assert.Equal(t, 0, p.Exit().Code)
	require.NoError(t, p.Stdin().Close())
	require.NoError(t, p.Release())
	<-done
}
