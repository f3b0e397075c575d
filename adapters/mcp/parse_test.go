package mcp_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/mcp"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
)

func TestParseFileServers(t *testing.T) {
	servers, err := mcp.ParseFile(filepath.Join("testdata", "mixed.mcp.json"))
	require.NoError(t, err)
	want := []domain.MCPServer{
		{Name: "tools", Transport: domain.MCPStdio, Command: "/opt/tools/bin/server", Args: []string{"serve"},
			Env: []domain.NameValue{{Name: "TOKEN", Value: "t0k"}}},
		{Name: "api", Transport: domain.MCPHTTP, URL: "https://api.example.com/mcp",
			Headers: []domain.NameValue{{Name: "Authorization", Value: "Bearer abc"}, {Name: "X-Trace", Value: "1"}}},
		{Name: "inferred-http", Transport: domain.MCPHTTP, URL: "https://infer.example.com/mcp", Headers: []domain.NameValue{}},
		{Name: "events", Transport: domain.MCPSSE, URL: "https://events.example.com/sse", Headers: []domain.NameValue{}},
		{Name: "last", Transport: domain.MCPStdio, Command: "/bin/last", Args: []string{}, Env: []domain.NameValue{}},
	}
	assert.Equal(t, want, servers)
}

// TestParseKeepsFileOrder checks that server, env and header order follow
// the file rather than any sorting, over many names.
func TestParseKeepsFileOrder(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"mcpServers":{`)
	names := []string{"zulu", "alpha", "mike", "bravo", "yankee", "charlie", "x-ray", "delta"}
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + n + `":{"command":"c","env":{"Z":"1","A":"2","M":"3"}}`)
	}
	b.WriteString(`}}`)
	servers, err := mcp.Parse([]byte(b.String()), "order.json")
	require.NoError(t, err)
	require.Len(t, servers, len(names))
	for i, s := range servers {
		assert.Equal(t, names[i], s.Name)
		assert.Equal(t, []domain.NameValue{{Name: "Z", Value: "1"}, {Name: "A", Value: "2"}, {Name: "M", Value: "3"}}, s.Env)
	}
}

func TestParseAccepts(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []domain.MCPServer
	}{
		{"no mcpServers", `{"other": 1}`, []domain.MCPServer{}},
		{"empty servers", `{"mcpServers": {}}`, []domain.MCPServer{}},
		{"utf-8 bom", "\xef\xbb\xbf{\"mcpServers\": {}}", []domain.MCPServer{}},
		{"only disabled", `{"mcpServers": {"a": {"command": "c", "enabled": false}}}`, []domain.MCPServer{}},
		{"disabled is not checked further", `{"mcpServers": {"a": {"type": "carrier-pigeon", "enabled": false}}}`, []domain.MCPServer{}},
		{"enabled true", `{"mcpServers": {"a": {"command": "c", "enabled": true}}}`,
			[]domain.MCPServer{{Name: "a", Transport: domain.MCPStdio, Command: "c", Args: []string{}, Env: []domain.NameValue{}}}},
		{"explicit stdio ignores url", `{"mcpServers": {"a": {"type": "stdio", "command": "c", "url": "http://x"}}}`,
			[]domain.MCPServer{{Name: "a", Transport: domain.MCPStdio, Command: "c", Args: []string{}, Env: []domain.NameValue{}}}},
		{"explicit http ignores command", `{"mcpServers": {"a": {"type": "http", "command": "c", "url": "http://x"}}}`,
			[]domain.MCPServer{{Name: "a", Transport: domain.MCPHTTP, URL: "http://x", Headers: []domain.NameValue{}}}},
		{"unknown members ignored", `{"mcpServers": {"a": {"command": "c", "cwd": "/x", "timeout": 1, "trust": true}}}`,
			[]domain.MCPServer{{Name: "a", Transport: domain.MCPStdio, Command: "c", Args: []string{}, Env: []domain.NameValue{}}}},
		{"escaped names", `{"mcpServers": {"a\u0020b": {"command": "c\n"}}}`,
			[]domain.MCPServer{{Name: "a b", Transport: domain.MCPStdio, Command: "c\n", Args: []string{}, Env: []domain.NameValue{}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mcp.Parse([]byte(tt.input), "f.json")
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseFaults(t *testing.T) {
	tests := []struct {
		name  string
		input string
		fault string
		class error
	}{
		{"empty file", ``, "is not valid JSON: unexpected end of JSON input (line 1, column 1)", mcp.ErrInvalidJSON},
		{"syntax", "{\n  \"mcpServers\": {,}\n}", "is not valid JSON: invalid character ',' looking for beginning of object key string (line 2, column 18)", mcp.ErrInvalidJSON},
		{"truncated", "{\n\"a\": [1,", "is not valid JSON: unexpected end of JSON input (line 2, column 9)", mcp.ErrInvalidJSON},
		{"bad last byte", `{"a":1]`, "is not valid JSON: invalid character ']' after object key:value pair (line 1, column 7)", mcp.ErrInvalidJSON},
		{"trailing data", `{} {}`, "is not valid JSON: invalid character '{' after top-level value (line 1, column 4)", mcp.ErrInvalidJSON},
		{"not utf-8", "{\"mcpServers\": {\"a\": {\"command\": \"\xff\"}}}", "is not valid UTF-8 (line 1, column 35)", mcp.ErrInvalidJSON},
		{"top level array", `[]`, "the top level: expected an object, found an array", mcp.ErrMalformed},
		{"top level null", `null`, "the top level: expected an object, found null", mcp.ErrMalformed},
		{"duplicate top-level key", `{"mcpServers": {}, "mcpServers": {}}`, `the top level: duplicate key "mcpServers"`, mcp.ErrMalformed},
		{"servers not object", `{"mcpServers": []}`, "mcpServers: expected an object, found an array", mcp.ErrMalformed},
		{"server twice", `{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}`, `mcpServers: server "a" is declared twice`, mcp.ErrMalformed},
		{"empty name", `{"mcpServers": {"": {"command": "x"}}}`, "mcpServers: a server has an empty name", mcp.ErrMalformed},
		{"server not object", `{"mcpServers": {"a": "npx"}}`, "mcpServers.a: expected an object, found a string", mcp.ErrMalformed},
		{"odd name quoted", `{"mcpServers": {"my server": 1}}`, `mcpServers."my server": expected an object, found a number`, mcp.ErrMalformed},
		{"duplicate field", `{"mcpServers": {"a": {"command": "x", "command": "y"}}}`, `mcpServers.a: duplicate key "command"`, mcp.ErrMalformed},
		{"enabled string", `{"mcpServers": {"a": {"command": "x", "enabled": "false"}}}`, "mcpServers.a: enabled: expected a boolean, found a string", mcp.ErrMalformed},
		{"type number", `{"mcpServers": {"a": {"type": 1}}}`, "mcpServers.a: type: expected a string, found a number", mcp.ErrMalformed},
		{"unknown type", `{"mcpServers": {"a": {"type": "ws", "url": "x"}}}`, `mcpServers.a: type: unsupported transport "ws" (want stdio, http or sse)`, mcp.ErrMalformed},
		{"neither", `{"mcpServers": {"a": {"args": []}}}`, "mcpServers.a: has neither command nor url", mcp.ErrMalformed},
		{"both", `{"mcpServers": {"a": {"command": "c", "url": "u"}}}`, `mcpServers.a: has both command and url: set type to "stdio", "http" or "sse"`, mcp.ErrMalformed},
		{"stdio without command", `{"mcpServers": {"a": {"type": "stdio"}}}`, "mcpServers.a: command: a stdio server needs a non-empty command", mcp.ErrMalformed},
		{"empty command", `{"mcpServers": {"a": {"command": ""}}}`, "mcpServers.a: command: a stdio server needs a non-empty command", mcp.ErrMalformed},
		{"command list", `{"mcpServers": {"a": {"command": ["npx"]}}}`, "mcpServers.a: command: expected a string, found an array", mcp.ErrMalformed},
		{"args string", `{"mcpServers": {"a": {"command": "c", "args": "-v"}}}`, "mcpServers.a: args: expected an array of strings, found a string", mcp.ErrMalformed},
		{"args element", `{"mcpServers": {"a": {"command": "c", "args": ["a", 8080]}}}`, "mcpServers.a: args[1]: expected a string, found a number", mcp.ErrMalformed},
		{"env list", `{"mcpServers": {"a": {"command": "c", "env": ["A=1"]}}}`, "mcpServers.a: env: expected an object, found an array", mcp.ErrMalformed},
		{"env value", `{"mcpServers": {"a": {"command": "c", "env": {"PORT": 8080}}}}`, "mcpServers.a: env.PORT: expected a string, found a number", mcp.ErrMalformed},
		{"env duplicate", `{"mcpServers": {"a": {"command": "c", "env": {"A": "1", "A": "2"}}}}`, `mcpServers.a: env: duplicate key "A"`, mcp.ErrMalformed},
		{"http without url", `{"mcpServers": {"a": {"type": "http"}}}`, "mcpServers.a: url: an http server needs a non-empty url", mcp.ErrMalformed},
		{"sse empty url", `{"mcpServers": {"a": {"type": "sse", "url": ""}}}`, "mcpServers.a: url: an sse server needs a non-empty url", mcp.ErrMalformed},
		{"headers value", `{"mcpServers": {"a": {"url": "u", "headers": {"X-N": true}}}}`, "mcpServers.a: headers.X-N: expected a string, found a boolean", mcp.ErrMalformed},
		{"headers odd key", `{"mcpServers": {"a": {"url": "u", "headers": {"a.b": null}}}}`, `mcpServers.a: headers."a.b": expected a string, found null`, mcp.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := mcp.Parse([]byte(tt.input), "/cfg/mcp.json")
			require.Error(t, err)
			var fe *mcp.FileError
			require.True(t, errors.As(err, &fe), "%T is not a FileError", err)
			assert.Equal(t, "/cfg/mcp.json: "+tt.fault, err.Error())
			assert.Equal(t, "/cfg/mcp.json", fe.Path)
			assert.ErrorIs(t, err, tt.class)
		})
	}
}

func TestParseHostile(t *testing.T) {
	deep := strings.Repeat("[", mcp.MaxDepth+1) + strings.Repeat("]", mcp.MaxDepth+1)
	atLimit := `{"x":` + strings.Repeat("[", mcp.MaxDepth-1) + strings.Repeat("]", mcp.MaxDepth-1) + `,"mcpServers":{}}`
	tests := []struct {
		name  string
		input string
		fault string
		class error
	}{
		{"deep arrays", deep, "nests deeper than 64 levels (line 1, column 65)", mcp.ErrInvalidJSON},
		{"deep unterminated", strings.Repeat(`{"a":`, 100000), "nests deeper than 64 levels (line 1, column 321)", mcp.ErrInvalidJSON},
		{"brackets in strings do not count", `{"mcpServers":{"a":{"command":"` + strings.Repeat("[", 1000) + `"}}}`, "", nil},
		{"escaped quote in string", `{"mcpServers":{"a":{"command":"\"[[[[","args":["]"]}}}`, "", nil},
		{"at the depth limit", atLimit, "", nil},
		{"nul bytes", "{\"mcpServers\":\x00}", "is not valid JSON: invalid character '\\x00' looking for beginning of value (line 1, column 15)", mcp.ErrInvalidJSON},
		{"truncated utf-8", "{\"a\":\"\xe2\x98\"}", "is not valid UTF-8 (line 1, column 7)", mcp.ErrInvalidJSON},
		{"utf-16", "\xff\xfe{\x00}\x00", "is not valid UTF-8 (line 1, column 1)", mcp.ErrInvalidJSON},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := mcp.Parse([]byte(tt.input), "f.json")
			if tt.fault == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Equal(t, "f.json: "+tt.fault, err.Error())
			assert.ErrorIs(t, err, tt.class)
		})
	}
}

func TestParseFileTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.json")
	f, err := os.Create(path)
	require.NoError(t, err)
	// A sparse file: large on paper, cheap on disk.
	require.NoError(t, f.Truncate(mcp.MaxFileBytes+1))
	require.NoError(t, f.Close())
	_, err = mcp.ParseFile(path)
	require.Error(t, err)
	assert.Equal(t, path+": is larger than the 16777216-byte limit", err.Error())
	assert.ErrorIs(t, err, mcp.ErrTooLarge)

	_, err = mcp.Parse(make([]byte, mcp.MaxFileBytes+1), "mem.json")
	assert.ErrorIs(t, err, mcp.ErrTooLarge)
}

func TestParseFileLargeButValid(t *testing.T) {
	// Just under the bound, a file with many servers still parses.
	var b strings.Builder
	b.WriteString(`{"mcpServers":{`)
	n := 0
	for b.Len() < 4<<20 {
		if n > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"s` + strings.Repeat("x", 8) + string(rune('a'+n%26)) + strconv.Itoa(n) + `":{"command":"c"}`)
		n++
	}
	b.WriteString(`}}`)
	path := filepath.Join(t.TempDir(), "big.json")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
	servers, err := mcp.ParseFile(path)
	require.NoError(t, err)
	assert.Len(t, servers, n)
}

func TestParseFileUnreadable(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name  string
		path  string
		fault string
	}{
		{"missing", filepath.Join(dir, "nope.json"), "cannot be read: no such file or directory"},
		{"directory", dir, "cannot be read: is a directory"},
	}
	if os.Geteuid() != 0 {
		locked := filepath.Join(dir, "locked.json")
		require.NoError(t, os.WriteFile(locked, []byte(`{}`), 0o000))
		tests = append(tests, struct {
			name  string
			path  string
			fault string
		}{"permission", locked, "cannot be read: permission denied"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := mcp.ParseFile(tt.path)
			require.Error(t, err)
			assert.Equal(t, tt.path+": "+tt.fault, err.Error())
			assert.ErrorIs(t, err, mcp.ErrUnreadable)
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"stdio.mcp.json", "mixed.mcp.json", "empty.mcp.json", "operator.mcp.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"mcpServers":{"a":{"url":"u","headers":{"h":"v"}}}}`))
	f.Add([]byte(`[[[[[[`))
	f.Add([]byte("{\"\xff\":1}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		servers, err := mcp.Parse(data, "fuzz.json")
		if err != nil {
			var fe *mcp.FileError
			if !errors.As(err, &fe) || !strings.HasPrefix(err.Error(), "fuzz.json: ") {
				t.Fatalf("error %v (%T) does not name the file", err, err)
			}
			return
		}
		for _, s := range servers {
			if s.Name == "" {
				t.Fatalf("server without a name from %q", data)
			}
			switch s.Transport {
			case domain.MCPStdio:
				if s.Command == "" {
					t.Fatalf("stdio server without a command from %q", data)
				}
			case domain.MCPHTTP, domain.MCPSSE:
				if s.URL == "" {
					t.Fatalf("%s server without a url from %q", s.Transport, data)
				}
			default:
				t.Fatalf("transport %q from %q", s.Transport, data)
			}
		}
		for _, w := range acpwire.EncodeMCPServers(servers) {
			if !json.Valid(w) {
				t.Fatalf("invalid wire JSON %s", w)
			}
		}
	})
}
