package netserve

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/internal/testsupport/sshtest"
)

// TestParseTCPRow: rows of /proc/net/tcp and /proc/net/tcp6 as a
// little-endian kernel prints them.
func TestParseTCPRow(t *testing.T) {
	cases := []struct {
		name, line     string
		local, remote  string
		state, uid     int
		wantErrContain string
	}{
		{
			name:  "IPv4 loopback, established",
			line:  "   3: 0100007F:A1B2 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 123456 1 0000000000000000 20 4 30 10 -1",
			local: "127.0.0.1:41394", remote: "127.0.0.1:8080", state: 1, uid: 1000,
		},
		{
			name:  "IPv4 listening, root",
			line:  "   0: 0100007F:0CEA 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 9 1 0000000000000000 100 0 0 10 0",
			local: "127.0.0.1:3306", remote: "0.0.0.0:0", state: 0x0A, uid: 0,
		},
		{
			name:  "IPv6 loopback",
			line:  "   1: 00000000000000000000000001000000:C350 00000000000000000000000001000000:0016 01 00000000:00000000 00:00000000 00000000  1001        0 77 1 0000000000000000 20 4 0 10 -1",
			local: "[::1]:50000", remote: "[::1]:22", state: 1, uid: 1001,
		},
		{
			name:  "IPv4-mapped IPv6 loopback",
			line:  "   2: 0000000000000000FFFF00000100007F:C351 0000000000000000FFFF00000100007F:0050 06 00000000:00000000 03:00001770 00000000     0        0 0 3 0000000000000000",
			local: "127.0.0.1:50001", remote: "127.0.0.1:80", state: 6, uid: 0,
		},
		{name: "too few fields", line: "   0: 0100007F:0CEA 00000000:0000 0A", wantErrContain: "fields"},
		{name: "address without a port", line: "   0: 0100007F 00000000:0000 0A 0:0 0:0 0 1000 0 1", wantErrContain: "address"},
		{name: "address of odd length", line: "   0: 0100007:0CEA 00000000:0000 0A 0:0 0:0 0 1000 0 1", wantErrContain: "address"},
		{name: "uid not a number", line: "   0: 0100007F:0CEA 00000000:0000 0A 0:0 0:0 0 me 0 1", wantErrContain: "uid"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			row, err := parseTCPRow(c.line, binary.LittleEndian)
			if c.wantErrContain != "" {
				assert.ErrorContains(t, err, c.wantErrContain)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.local, row.local.String())
			assert.Equal(t, c.remote, row.remote.String())
			assert.Equal(t, c.state, row.state)
			assert.Equal(t, c.uid, row.uid)
		})
	}
}

// TestTCPPeerUID: the peer of a connection this process made is this
// process's user, over IPv4 and IPv6 loopback.
func TestTCPPeerUID(t *testing.T) {
	for _, host := range []string{"127.0.0.1:0", "[::1]:0"} {
		t.Run(host, func(t *testing.T) {
			ln, err := net.Listen("tcp", host)
			if err != nil {
				t.Skipf("no loopback at %s: %v", host, err)
			}
			defer ln.Close()
			c, err := net.Dial("tcp", ln.Addr().String())
			require.NoError(t, err)
			defer c.Close()
			s, err := ln.Accept()
			require.NoError(t, err)
			defer s.Close()
			uid, err := tcpPeerUID(s)
			require.NoError(t, err)
			assert.Equal(t, os.Getuid(), uid)
		})
	}
}

// syncBuffer is a log sink the server's goroutines write to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// peerDialEnv names the address the helper process dials.
const peerDialEnv = "ACPDRIVE_TEST_PEER_DIAL"

// TestPeerDialHelper is the process another account runs: it dials the
// address, sends a line, half-closes and prints what came back.
func TestPeerDialHelper(t *testing.T) {
	addr := os.Getenv(peerDialEnv)
	if addr == "" {
		t.Skip("run by TestSameUserOnly as another account")
	}
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	_, _ = c.Write([]byte("{\"a\":1}\n"))
	_ = c.(*net.TCPConn).CloseWrite()
	out, _ := io.ReadAll(c)
	_, _ = os.Stdout.Write([]byte("READ:" + string(out) + ":END\n"))
}

// otherAccount is the second local account CI creates, or a skip: the
// test must run as root to act as it.
func otherAccount(t *testing.T) *user.User {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("acting as another local account needs root (CI runs as root)")
	}
	u, err := user.Lookup(sshtest.RemoteUser)
	if err != nil {
		t.Skipf("no local account %s: %v", sshtest.RemoteUser, err)
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("setpriv (util-linux) is needed to act as another account")
	}
	return u
}

// dialAs dials addr from this test binary run as u; what it read.
func dialAs(t *testing.T, u *user.User, addr string) string {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	b, err := os.ReadFile(self)
	require.NoError(t, err)
	dir, err := os.MkdirTemp("", "peer")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	bin := filepath.Join(dir, "netserve.test")
	require.NoError(t, os.WriteFile(bin, b, 0o755)) //nolint:gosec // another account runs it
	cmd := exec.Command("setpriv", "--reuid="+u.Uid, "--regid="+u.Gid, "--clear-groups",
		bin, "-test.run=^TestPeerDialHelper$", "-test.count=1")
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/bin:/bin", peerDialEnv + "=" + addr}
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	_, read, ok := strings.Cut(string(out), "READ:")
	require.True(t, ok, string(out))
	read, _, ok = strings.Cut(read, ":END")
	require.True(t, ok, string(out))
	return read
}

// TestSameUserOnly: with Options.SameUserOnly this user's connections are
// served (a byte stream, a WebSocket); another account's is closed before
// it is read, and starts no runtime (docs/behaviour.md#held-sessions).
func TestSameUserOnly(t *testing.T) {
	logs := &syncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	s, l := serveWith(t, Options{Listen: "tcp://127.0.0.1:0", SameUserOnly: true, Logger: logger})
	c, r := dialTCP(t, s.URL())
	_, err := c.Write([]byte("{\"a\":1}\n"))
	require.NoError(t, err)
	require.NoError(t, c.(*net.TCPConn).CloseWrite())
	out, err := io.ReadAll(r)
	require.NoError(t, err)
	assert.Equal(t, "echo {\"a\":1}\n", string(out))
	assert.Equal(t, int32(1), l.started.Load())

	hs, _ := serveWith(t, Options{Listen: "http://127.0.0.1:0", SameUserOnly: true, Token: "s3cret", Logger: logger})
	ctx := context.Background()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL(), "http"), &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer s3cret"}}})
	require.NoError(t, err)
	require.NoError(t, ws.Write(ctx, websocket.MessageText, []byte(`{"b":2}`)))
	_, msg, err := ws.Read(ctx)
	require.NoError(t, err)
	assert.Equal(t, `echo {"b":2}`, string(msg))
	require.NoError(t, ws.Close(websocket.StatusNormalClosure, ""))
	assert.NotContains(t, logs.String(), "refused")

	u := otherAccount(t)
	read := dialAs(t, u, strings.TrimPrefix(s.URL(), "tcp://"))
	assert.Empty(t, read, "another account reads nothing")
	assert.Equal(t, int32(1), l.started.Load(), "another account starts no runtime")
	assert.Contains(t, logs.String(), `msg="refused a connection of another user"`)
	assert.Contains(t, logs.String(), "peer_uid="+u.Uid)

	// This user is still served after the refusal.
	c, r = dialTCP(t, s.URL())
	_, err = c.Write([]byte("x\n"))
	require.NoError(t, err)
	line, err := r.ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "echo x\n", line)
}
