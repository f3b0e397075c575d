package mcp_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/mcp"
	"github.com/acpdrive/acpdrive/domain"
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

func TestLoad(t *testing.T) {
	tests := []struct {
		input string
		want  []domain.MCPServer
	}{
		{"stdio.mcp.json", []domain.MCPServer{
			{Name: "filesystem", Transport: domain.MCPStdio, Command: "/usr/local/bin/mcp-fs",
				Args: []string{"--root", "/work space", "--pattern", "*.go & <tests>"},
				Env: []domain.NameValue{
					{Name: "ZETA", Value: "last?"}, {Name: "ALPHA", Value: "first"},
					{Name: "UNICODE", Value: "héllo ☃"}, {Name: "QUOTE", Value: `a "quoted" \ value`},
				}},
			{Name: "bare", Transport: domain.MCPStdio, Command: "npx", Args: []string{}, Env: []domain.NameValue{}},
			{Name: "nulls", Transport: domain.MCPStdio, Command: "run", Args: []string{}, Env: []domain.NameValue{}},
		}},
		{"empty.mcp.json", []domain.MCPServer{}},
		{"generated.mcp.json.golden", []domain.MCPServer{
			{Name: "search", Transport: domain.MCPHTTP, URL: "https://search.example.com/mcp",
				Headers: []domain.NameValue{{Name: "X-Key", Value: "k"}}},
			{Name: "local", Transport: domain.MCPStdio, Command: "/usr/bin/local-mcp", Args: []string{"--stdio"}, Env: []domain.NameValue{}},
			{Name: "sortie-tools", Transport: domain.MCPStdio, Command: "/usr/local/bin/sortie",
				Args: []string{"mcp-server", "--workflow", "/repo/WORKFLOW.md"},
				Env: []domain.NameValue{
					{Name: "SORTIE_ISSUE_ID", Value: "abc-123"},
					{Name: "SORTIE_ISSUE_IDENTIFIER", Value: "PROJ-7"},
					{Name: "SORTIE_WORKSPACE", Value: "/ws/PROJ-7"},
				}},
		}},
	}
	src := mcp.New(mcp.Options{})
	for _, tt := range tests {
		t.Run(tt.input, func(t *testing.T) {
			got, err := src.Load(context.Background(), filepath.Join("testdata", tt.input))
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestLoadWithholdsNothing checks that Load returns every enabled server
// whatever its transport: choosing what a runtime can take is not the
// adapter's decision.
func TestLoadWithholdsNothing(t *testing.T) {
	path := filepath.Join("testdata", "mixed.mcp.json")
	got, err := mcp.New(mcp.Options{}).Load(context.Background(), path)
	require.NoError(t, err)
	parsed, err := mcp.ParseFile(path)
	require.NoError(t, err)
	assert.Equal(t, parsed, got)
	var names []string
	transports := map[domain.MCPTransport]int{}
	for _, s := range got {
		names = append(names, s.Name)
		transports[s.Transport]++
	}
	assert.Equal(t, []string{"tools", "api", "inferred-http", "events", "last"}, names)
	assert.Equal(t, map[domain.MCPTransport]int{domain.MCPStdio: 2, domain.MCPHTTP: 2, domain.MCPSSE: 1}, transports)
}

func TestLoadNoPath(t *testing.T) {
	servers, err := mcp.New(mcp.Options{}).Load(context.Background(), "")
	require.NoError(t, err)
	assert.NotNil(t, servers)
	assert.Empty(t, servers)
}

func TestLoadCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	servers, err := mcp.New(mcp.Options{}).Load(ctx, filepath.Join("testdata", "stdio.mcp.json"))
	assert.Nil(t, servers)
	assert.ErrorIs(t, err, context.Canceled)
	var ae *domain.AgentError
	assert.False(t, errors.As(err, &ae), "a cancelled load is not a configuration fault")
}

func TestLoadFaults(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "mcp.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"mcpServers": {"x": {"command": 7}}}`), 0o600))
	invalid := filepath.Join(dir, "invalid.json")
	require.NoError(t, os.WriteFile(invalid, []byte(`{"mcpServers": `), 0o600))
	huge := filepath.Join(dir, "huge.json")
	f, err := os.Create(huge)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(mcp.MaxFileBytes+1))
	require.NoError(t, f.Close())
	missing := filepath.Join(dir, "missing.json")
	tests := []struct {
		name    string
		path    string
		message string
		class   error
	}{
		{"malformed", bad, "parse MCP config: " + bad + ": mcpServers.x: command: expected a string, found a number", mcp.ErrMalformed},
		{"invalid JSON", invalid, "parse MCP config: " + invalid + ": is not valid JSON: unexpected end of JSON input (line 1, column 16)", mcp.ErrInvalidJSON},
		{"too large", huge, "parse MCP config: " + huge + ": is larger than the 16777216-byte limit", mcp.ErrTooLarge},
		{"missing", missing, "parse MCP config: " + missing + ": cannot be read: no such file or directory", mcp.ErrUnreadable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			servers, err := mcp.New(mcp.Options{}).Load(context.Background(), tt.path)
			require.Error(t, err)
			assert.Nil(t, servers)
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

func TestLoadLogsNoSecrets(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	path := filepath.Join("testdata", "mixed.mcp.json")
	_, err := mcp.New(mcp.Options{Logger: logger}).Load(context.Background(), path)
	require.NoError(t, err)
	out := buf.String()
	assert.Contains(t, out, `msg="MCP configuration loaded"`)
	assert.Contains(t, out, "servers=5")
	for _, secret := range []string{"t0k", "Bearer abc", "/opt/tools/bin/server", "https://api.example.com/mcp"} {
		assert.NotContains(t, out, secret)
	}
}

func TestLoadConcurrent(t *testing.T) {
	src := mcp.New(mcp.Options{})
	path := filepath.Join("testdata", "mixed.mcp.json")
	want, err := mcp.ParseFile(path)
	require.NoError(t, err)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			got, err := src.Load(context.Background(), path)
			assert.NoError(t, err)
			assert.Equal(t, want, got)
		})
	}
	wg.Wait()
}

func TestParseErrorHelper(t *testing.T) {
	fe := &mcp.FileError{Path: "/x.json", Fault: "is broken", Class: mcp.ErrMalformed}
	ae := mcp.ParseError(fe)
	assert.Equal(t, "parse MCP config: /x.json: is broken", ae.Message)
	assert.Equal(t, "agent: response_error: parse MCP config: /x.json: is broken", ae.Error())
	assert.True(t, ae.Kind.Retryable())
	assert.ErrorIs(t, ae, mcp.ErrMalformed)
	var got *mcp.FileError
	require.True(t, errors.As(ae, &got))
	assert.Same(t, fe, got)
}
