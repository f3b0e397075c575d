package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/mcp"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./adapters/mcp/ -update to create it")
	assert.Equal(t, string(want), string(got), "golden file %s", path)
}

// wireListing renders what Render returned the way the golden files hold
// it: the withheld flag, then one wire declaration per line, byte for byte.
func wireListing(servers []json.RawMessage, withheld bool) []byte {
	var b bytes.Buffer
	if withheld {
		b.WriteString("withheld: true\n")
	} else {
		b.WriteString("withheld: false\n")
	}
	for _, s := range servers {
		b.Write(s)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func TestRenderGolden(t *testing.T) {
	none := ports.MCPCapabilities{}
	httpOnly := ports.MCPCapabilities{HTTP: true}
	sseOnly := ports.MCPCapabilities{SSE: true}
	both := ports.MCPCapabilities{HTTP: true, SSE: true}
	tests := []struct {
		input  string
		caps   ports.MCPCapabilities
		golden string
	}{
		{"stdio.mcp.json", none, "stdio.wire.golden"},
		{"stdio.mcp.json", both, "stdio.wire.golden"},
		{"mixed.mcp.json", none, "mixed-caps-none.wire.golden"},
		{"mixed.mcp.json", httpOnly, "mixed-caps-http.wire.golden"},
		{"mixed.mcp.json", sseOnly, "mixed-caps-sse.wire.golden"},
		{"mixed.mcp.json", both, "mixed-caps-both.wire.golden"},
		{"empty.mcp.json", both, "empty.wire.golden"},
		{"generated.mcp.json.golden", none, "generated.wire.golden"},
	}
	r := mcp.New(mcp.Options{})
	for _, tt := range tests {
		t.Run(tt.golden+"/"+tt.input, func(t *testing.T) {
			servers, withheld, err := r.Render(context.Background(), filepath.Join("testdata", tt.input), tt.caps)
			require.NoError(t, err)
			for _, s := range servers {
				require.True(t, json.Valid(s), "invalid wire JSON %s", s)
			}
			golden(t, tt.golden, wireListing(servers, withheld))
		})
	}
}

func TestRenderWithholding(t *testing.T) {
	path := filepath.Join("testdata", "mixed.mcp.json")
	r := mcp.New(mcp.Options{})
	tests := []struct {
		name     string
		caps     ports.MCPCapabilities
		names    []string
		withheld bool
	}{
		{"no caps: stdio only", ports.MCPCapabilities{}, []string{"tools", "last"}, true},
		{"http", ports.MCPCapabilities{HTTP: true}, []string{"tools", "api", "inferred-http", "last"}, true},
		{"sse", ports.MCPCapabilities{SSE: true}, []string{"tools", "events", "last"}, true},
		{"both", ports.MCPCapabilities{HTTP: true, SSE: true},
			[]string{"tools", "api", "inferred-http", "events", "last"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			servers, withheld, err := r.Render(context.Background(), path, tt.caps)
			require.NoError(t, err)
			var names []string
			for _, s := range servers {
				var v struct{ Name string }
				require.NoError(t, json.Unmarshal(s, &v))
				names = append(names, v.Name)
			}
			assert.Equal(t, tt.names, names)
			assert.Equal(t, tt.withheld, withheld)
		})
	}
}

func TestRenderNoPath(t *testing.T) {
	servers, withheld, err := mcp.New(mcp.Options{}).Render(context.Background(), "", ports.MCPCapabilities{})
	require.NoError(t, err)
	assert.NotNil(t, servers)
	assert.Empty(t, servers)
	assert.False(t, withheld)
}

func TestRenderCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := mcp.New(mcp.Options{}).Render(ctx, filepath.Join("testdata", "stdio.mcp.json"), ports.MCPCapabilities{})
	assert.ErrorIs(t, err, context.Canceled)
}

func TestRenderParseError(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "mcp.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"mcpServers": {"x": {"command": 7}}}`), 0o600))
	missing := filepath.Join(dir, "missing.json")
	tests := []struct {
		name    string
		path    string
		message string
		class   error
	}{
		{"malformed", bad, "parse MCP config: " + bad + ": mcpServers.x: command: expected a string, found a number", mcp.ErrMalformed},
		{"missing", missing, "parse MCP config: " + missing + ": cannot be read: no such file or directory", mcp.ErrUnreadable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			servers, withheld, err := mcp.New(mcp.Options{}).Render(context.Background(), tt.path, ports.MCPCapabilities{HTTP: true})
			require.Error(t, err)
			assert.Nil(t, servers)
			assert.False(t, withheld)
			var ae *domain.AgentError
			require.True(t, errors.As(err, &ae), "%T is not an AgentError", err)
			assert.Equal(t, domain.KindResponseError, ae.Kind)
			assert.Equal(t, tt.message, ae.Message)
			assert.Equal(t, "agent: response_error: "+tt.message, err.Error())
			assert.ErrorIs(t, err, tt.class)
			var fe *mcp.FileError
			require.True(t, errors.As(err, &fe))
			assert.Equal(t, tt.path, fe.Path)
		})
	}
}

func TestServerWire(t *testing.T) {
	tests := []struct {
		name   string
		server mcp.Server
		want   string
	}{
		{"stdio empty lists", mcp.Server{Name: "a", Transport: mcp.TransportStdio, Command: "/bin/a"},
			`{"name":"a","command":"/bin/a","args":[],"env":[]}`},
		{"empty transport is stdio", mcp.Server{Name: "a", Command: "/bin/a", Args: []string{"x"}},
			`{"name":"a","command":"/bin/a","args":["x"],"env":[]}`},
		{"stdio env pairs in order", mcp.Server{Name: "a", Transport: mcp.TransportStdio, Command: "c",
			Env: []mcp.Pair{{Name: "B", Value: "2"}, {Name: "A", Value: "1"}}},
			`{"name":"a","command":"c","args":[],"env":[{"name":"B","value":"2"},{"name":"A","value":"1"}]}`},
		{"http", mcp.Server{Name: "h", Transport: mcp.TransportHTTP, URL: "https://h/mcp?a=1&b=<2>",
			Headers: []mcp.Pair{{Name: "Authorization", Value: "Bearer t"}}},
			`{"type":"http","name":"h","url":"https://h/mcp?a=1&b=<2>","headers":[{"name":"Authorization","value":"Bearer t"}]}`},
		{"sse no headers", mcp.Server{Name: "s", Transport: mcp.TransportSSE, URL: "https://s"},
			`{"type":"sse","name":"s","url":"https://s","headers":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, string(tt.server.Wire()))
		})
	}
}

func TestRenderServersUnknownTransportWithheld(t *testing.T) {
	servers := []mcp.Server{
		{Name: "ws", Transport: "websocket", URL: "wss://x"},
		{Name: "s", Transport: mcp.TransportStdio, Command: "c"},
	}
	wire, withheld := mcp.RenderServers(servers, ports.MCPCapabilities{HTTP: true, SSE: true})
	require.Len(t, wire, 1)
	require.Len(t, withheld, 1)
	assert.Equal(t, "ws", withheld[0].Name)
	wire, withheld = mcp.RenderServers(nil, ports.MCPCapabilities{})
	assert.NotNil(t, wire)
	assert.Empty(t, wire)
	assert.Empty(t, withheld)
}

func TestParseErrorHelper(t *testing.T) {
	fe := &mcp.FileError{Path: "/x.json", Fault: "is broken", Class: mcp.ErrMalformed}
	ae := mcp.ParseError(fe)
	assert.Equal(t, "parse MCP config: /x.json: is broken", ae.Message)
	assert.Equal(t, "agent: response_error: parse MCP config: /x.json: is broken", ae.Error())
	assert.True(t, ae.Kind.Retryable())
	assert.ErrorIs(t, ae, mcp.ErrMalformed)
}
