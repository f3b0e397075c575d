package mcp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/mcp"
	"github.com/acpdrive/acpdrive/domain"
)

// tools is the caller's reserved entry the way a worker builds it.
var tools = domain.MCPServer{
	Transport: domain.MCPStdio,
	Command:   "/usr/local/bin/sortie",
	Args:      []string{"mcp-server", "--workflow", "/repo/WORKFLOW.md"},
	Env: []domain.NameValue{
		{Name: "SORTIE_ISSUE_ID", Value: "abc-123"},
		{Name: "SORTIE_ISSUE_IDENTIFIER", Value: "PROJ-7"},
		{Name: "SORTIE_WORKSPACE", Value: "/ws/PROJ-7"},
	},
}

func TestMergeGolden(t *testing.T) {
	doc, err := mcp.Merge(filepath.Join("testdata", "operator.mcp.json"), "", tools)
	require.NoError(t, err)
	require.True(t, json.Valid(doc))
	golden(t, "generated.mcp.json.golden", doc)
}

func TestMergeWithoutOperatorFile(t *testing.T) {
	doc, err := mcp.Merge("", "acpdrive-tools", tools)
	require.NoError(t, err)
	golden(t, "generated-no-operator.mcp.json.golden", doc)
	servers, err := mcp.Parse(doc, "generated")
	require.NoError(t, err)
	want := tools
	want.Name = "acpdrive-tools"
	assert.Equal(t, []domain.MCPServer{want}, servers)
}

func TestMergeRoundTrip(t *testing.T) {
	doc, err := mcp.Merge(filepath.Join("testdata", "operator.mcp.json"), mcp.DefaultReservedName, tools)
	require.NoError(t, err)
	servers, err := mcp.Parse(doc, "generated")
	require.NoError(t, err)
	var names []string
	for _, s := range servers {
		names = append(names, s.Name)
	}
	// The disabled operator server is carried through and dropped on parse.
	assert.Equal(t, []string{"search", "local", "sortie-tools"}, names)
	want := tools
	want.Name = "sortie-tools"
	assert.Equal(t, want, servers[2])
}

func TestMergeHTTPReserved(t *testing.T) {
	reserved := domain.MCPServer{Transport: domain.MCPHTTP, URL: "http://127.0.0.1:9/mcp",
		Headers: []domain.NameValue{{Name: "Authorization", Value: "Bearer x"}}}
	doc, err := mcp.Merge("", "", reserved)
	require.NoError(t, err)
	assert.JSONEq(t, `{"mcpServers":{"sortie-tools":{"type":"http","url":"http://127.0.0.1:9/mcp","headers":{"Authorization":"Bearer x"}}}}`, string(doc))
}

func TestMergeOperatorWithoutServers(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, content, want string
	}{
		{"empty object", `{}`, `{"mcpServers":{"sortie-tools":{"type":"stdio","command":"c","args":[],"env":{}}}}`},
		{"other members", `{"b": 1, "a": [true]}`, `{"b":1,"a":[true],"mcpServers":{"sortie-tools":{"type":"stdio","command":"c","args":[],"env":{}}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name+".json")
			require.NoError(t, os.WriteFile(path, []byte(tt.content), 0o600))
			doc, err := mcp.Merge(path, "", domain.MCPServer{Command: "c"})
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(doc))
		})
	}
}

func TestMergeFaults(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
		return path
	}
	reservedTaken := write("taken.json", `{"mcpServers": {"sortie-tools": {"command": "/evil"}}}`)
	reservedDisabled := write("taken-disabled.json", `{"mcpServers": {"mine": {"command": "c", "enabled": false}}}`)
	custom := write("custom.json", `{"mcpServers": {"acpdrive-tools": {"url": "http://x"}}}`)
	invalid := write("invalid.json", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"c\",}\n  }\n}\n")
	malformed := write("malformed.json", `{"mcpServers": {"a": {"command": "c", "args": [1]}}}`)
	missing := filepath.Join(dir, "missing.json")
	tests := []struct {
		name     string
		path     string
		reserved string
		want     string
		class    error
	}{
		{"reserved name taken", reservedTaken, "", reservedTaken + `: declares a server named "sortie-tools", a name reserved for the caller's own tools`, mcp.ErrReservedName},
		{"reserved name taken by a disabled server", reservedDisabled, "mine", reservedDisabled + `: declares a server named "mine", a name reserved for the caller's own tools`, mcp.ErrReservedName},
		{"configured reserved name", custom, "acpdrive-tools", custom + `: declares a server named "acpdrive-tools", a name reserved for the caller's own tools`, mcp.ErrReservedName},
		{"default name free under a custom one", reservedTaken, "acpdrive-tools", "", nil},
		{"invalid JSON", invalid, "", invalid + ": is not valid JSON: invalid character '}' looking for beginning of object key string (line 3, column 26)", mcp.ErrInvalidJSON},
		{"malformed", malformed, "", malformed + ": mcpServers.a: args[0]: expected a string, found a number", mcp.ErrMalformed},
		{"unreadable", missing, "", missing + ": cannot be read: no such file or directory", mcp.ErrUnreadable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := mcp.Merge(tt.path, tt.reserved, tools)
			if tt.want == "" {
				require.NoError(t, err)
				assert.True(t, json.Valid(doc))
				return
			}
			require.Error(t, err)
			assert.Nil(t, doc)
			assert.Equal(t, tt.want, err.Error())
			assert.ErrorIs(t, err, tt.class)
		})
	}
}

func TestMergeBadReservedServer(t *testing.T) {
	tests := []struct {
		name   string
		server domain.MCPServer
		want   string
	}{
		{"stdio without command", domain.MCPServer{}, `reserved MCP server "sortie-tools": a stdio server needs a command`},
		{"http without url", domain.MCPServer{Transport: domain.MCPHTTP}, `reserved MCP server "sortie-tools": an http server needs a url`},
		{"unknown transport", domain.MCPServer{Transport: "ws", URL: "x"}, `reserved MCP server "sortie-tools": unsupported transport "ws"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := mcp.Merge("", "", tt.server)
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error())
		})
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".sortie", "mcp.json")
	doc, err := mcp.Merge(filepath.Join("testdata", "operator.mcp.json"), "", tools)
	require.NoError(t, err)
	require.NoError(t, mcp.WriteFile(path, doc))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, doc, got)
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())

	// A second write replaces the first and leaves no temporary file.
	require.NoError(t, mcp.WriteFile(path, []byte("{}\n")))
	got, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "{}\n", string(got))
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	assert.Len(t, entries, 1)
}

func TestWriteFileFailureNamesPath(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(blocker, nil, 0o600))
	path := filepath.Join(blocker, "mcp.json")
	err := mcp.WriteFile(path, []byte("{}"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "write MCP config "+path+": create directory: ")
}

func TestWriteThenParse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp.json")
	doc, err := mcp.Merge(filepath.Join("testdata", "operator.mcp.json"), "", tools)
	require.NoError(t, err)
	require.NoError(t, mcp.WriteFile(path, doc))
	servers, err := mcp.ParseFile(path)
	require.NoError(t, err)
	assert.Len(t, servers, 3)
}
