package mcpbeacon_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/acpdrive/acpdrive/adapters/mcpbeacon"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// serveArg makes the test binary run the beacon (mcpbeacon.Main), so the
// tests drive it as a real process, as a runtime would.
const serveArg = "serve-beacon"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == serveArg {
		os.Exit(mcpbeacon.Main(context.Background(), os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	goleak.VerifyTestMain(m)
}

// waitFor bounds waits on what should happen promptly; never the bound
// under test.
const waitFor = 20 * time.Second

func newBeacon(t *testing.T) *mcpbeacon.Beacon {
	t.Helper()
	return mcpbeacon.New(mcpbeacon.Options{Command: []string{os.Args[0], serveArg}})
}

func arm(t *testing.T, b *mcpbeacon.Beacon) ports.ArmedBeacon {
	t.Helper()
	a, err := b.Arm(context.Background())
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Release() })
	return a
}

// startAsRuntime starts the declared server the way a runtime does and
// completes MCP initialize with it as client name/1.
func startAsRuntime(t *testing.T, srv domain.MCPServer, name string) (*mcp.ClientSession, *exec.Cmd) {
	t.Helper()
	return startAsRuntimeAt(t, srv, name, "")
}

// startAsRuntimeAt is startAsRuntime speaking MCP protocol version
// version ("" the SDK's latest).
func startAsRuntimeAt(t *testing.T, srv domain.MCPServer, name, version string) (*mcp.ClientSession, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(srv.Command, srv.Args...)
	cmd.Env = os.Environ()
	for _, e := range srv.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	cmd.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	return cs, cmd
}

func waitClosed(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(waitFor):
		t.Fatal("the beacon did not report initialize")
	}
}

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestBeaconReportsInitializeAndExitsOnStdinEOF(t *testing.T) {
	a := arm(t, newBeacon(t))
	srv := a.Server()
	assert.Equal(t, domain.BeaconServerName, srv.Name)
	assert.Equal(t, domain.MCPStdio, srv.Transport)
	assert.Equal(t, []string{serveArg}, srv.Args)
	require.Len(t, srv.Env, 2)
	assert.Equal(t, mcpbeacon.EnvSocket, srv.Env[0].Name)
	assert.Equal(t, mcpbeacon.EnvToken, srv.Env[1].Name)
	assert.Len(t, srv.Env[1].Value, 64)
	info, err := os.Stat(filepath.Dir(srv.Env[0].Value))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), info.Mode().Perm(), "the socket's directory is private")
	assert.False(t, closed(a.Initialized()))
	assert.Empty(t, a.MCPClient())

	cs, cmd := startAsRuntime(t, srv, "a-runtime")
	waitClosed(t, a.Initialized())
	assert.Equal(t, "a-runtime/1", a.MCPClient())

	res := cs.InitializeResult()
	assert.Equal(t, domain.BeaconServerName, res.ServerInfo.Name)
	assert.Nil(t, res.Capabilities.Tools, "the beacon offers no tool")
	assert.Nil(t, res.Capabilities.Resources, "nor a resource")
	assert.Nil(t, res.Capabilities.Prompts, "nor a prompt")

	require.NoError(t, cs.Close(), "closing stdin ends the beacon")
	require.NotNil(t, cmd.ProcessState)
	assert.Equal(t, 0, cmd.ProcessState.ExitCode())

	dir := filepath.Dir(srv.Env[0].Value)
	require.NoError(t, a.Release())
	require.NoError(t, a.Release(), "Release is idempotent")
	_, err = os.Stat(dir)
	assert.True(t, os.IsNotExist(err), "Release removes the directory")
}

// Runtimes of today speak an MCP revision with initialize and the
// initialized notification; the SDK's latest replaces them with
// server/discover. Both confirm.
func TestBeaconReportsEitherHandshake(t *testing.T) {
	for _, version := range []string{"2025-06-18", "2025-11-25", ""} {
		t.Run("version="+version, func(t *testing.T) {
			a := arm(t, newBeacon(t))
			cs, cmd := startAsRuntimeAt(t, a.Server(), "client", version)
			waitClosed(t, a.Initialized())
			assert.Equal(t, "client/1", a.MCPClient())
			require.NoError(t, cs.Close())
			assert.Equal(t, 0, cmd.ProcessState.ExitCode())
		})
	}
}

func TestBeaconsOfOneProcessNeverCollide(t *testing.T) {
	b := newBeacon(t)
	armed := []ports.ArmedBeacon{arm(t, b), arm(t, b), arm(t, b)}
	sockets := map[string]bool{}
	for _, a := range armed {
		sockets[a.Server().Env[0].Value] = true
	}
	assert.Len(t, sockets, 3, "every session has a socket of its own")

	cs, _ := startAsRuntime(t, armed[1].Server(), "second")
	waitClosed(t, armed[1].Initialized())
	assert.False(t, closed(armed[0].Initialized()))
	assert.False(t, closed(armed[2].Initialized()))
	require.NoError(t, cs.Close())
}

func TestBeaconIgnoresAReportWithAnotherToken(t *testing.T) {
	a := arm(t, newBeacon(t))
	srv := a.Server()
	send := func(token, client string) {
		conn, err := net.Dial("unix", srv.Env[0].Value)
		require.NoError(t, err)
		line, _ := json.Marshal(map[string]string{"token": token, "mcp_client": client})
		_, err = conn.Write(append(line, '\n'))
		require.NoError(t, err)
		// Wait until the beacon closed its side: the line was handled.
		_, _ = io.Copy(io.Discard, conn)
		_ = conn.Close()
	}
	send(strings.Repeat("0", 64), "forger/1")
	send("", "empty/1")
	assert.False(t, closed(a.Initialized()), "a wrong token confirms nothing")
	send(srv.Env[1].Value, "genuine/1")
	waitClosed(t, a.Initialized())
	assert.Equal(t, "genuine/1", a.MCPClient())
}

func TestArmRefusals(t *testing.T) {
	tests := []struct {
		name string
		opts mcpbeacon.Options
		want string
	}{
		{"no command", mcpbeacon.Options{}, mcpbeacon.ErrNoCommand.Error()},
		{"socket path too long", mcpbeacon.Options{Command: []string{"x"}, Dir: longDir(t)}, "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := mcpbeacon.New(tt.opts).Arm(context.Background())
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func longDir(t *testing.T) string {
	d := filepath.Join(t.TempDir(), strings.Repeat("d", 100))
	require.NoError(t, os.MkdirAll(d, 0o700))
	return d
}

func TestServeReturnsWhenInputEnds(t *testing.T) {
	in, w := io.Pipe()
	require.NoError(t, w.Close())
	err := mcpbeacon.Serve(context.Background(), in, io.Discard, func(string) string { return "" }, nil)
	assert.NoError(t, err)
}

func TestMainRefusesArguments(t *testing.T) {
	var stderr strings.Builder
	code := mcpbeacon.Main(context.Background(), []string{"extra"}, strings.NewReader(""), io.Discard, &stderr)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr.String(), "takes no arguments")
}
