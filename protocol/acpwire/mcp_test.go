package acpwire_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
)

// The server lists below are what the MCP adapter parses out of its test
// files (stdio, mixed, empty and the generated configuration); the
// expected lines are the exact bytes those servers must take on the wire.

var stdioServers = []domain.MCPServer{
	{Name: "filesystem", Transport: domain.MCPStdio, Command: "/usr/local/bin/mcp-fs",
		Args: []string{"--root", "/work space", "--pattern", "*.go & <tests>"},
		Env: []domain.NameValue{
			{Name: "ZETA", Value: "last?"}, {Name: "ALPHA", Value: "first"},
			{Name: "UNICODE", Value: "héllo ☃"}, {Name: "QUOTE", Value: `a "quoted" \ value`},
		}},
	{Name: "bare", Transport: domain.MCPStdio, Command: "npx", Args: []string{}, Env: []domain.NameValue{}},
	{Name: "nulls", Transport: domain.MCPStdio, Command: "run", Args: []string{}, Env: []domain.NameValue{}},
}

const stdioWire = `{"name":"filesystem","command":"/usr/local/bin/mcp-fs","args":["--root","/work space","--pattern","*.go & <tests>"],"env":[{"name":"ZETA","value":"last?"},{"name":"ALPHA","value":"first"},{"name":"UNICODE","value":"héllo ☃"},{"name":"QUOTE","value":"a \"quoted\" \\ value"}]}
{"name":"bare","command":"npx","args":[],"env":[]}
{"name":"nulls","command":"run","args":[],"env":[]}
`

var mixedServers = []domain.MCPServer{
	{Name: "tools", Transport: domain.MCPStdio, Command: "/opt/tools/bin/server", Args: []string{"serve"},
		Env: []domain.NameValue{{Name: "TOKEN", Value: "t0k"}}},
	{Name: "api", Transport: domain.MCPHTTP, URL: "https://api.example.com/mcp",
		Headers: []domain.NameValue{{Name: "Authorization", Value: "Bearer abc"}, {Name: "X-Trace", Value: "1"}}},
	{Name: "inferred-http", Transport: domain.MCPHTTP, URL: "https://infer.example.com/mcp", Headers: []domain.NameValue{}},
	{Name: "events", Transport: domain.MCPSSE, URL: "https://events.example.com/sse", Headers: []domain.NameValue{}},
	{Name: "last", Transport: domain.MCPStdio, Command: "/bin/last", Args: []string{}, Env: []domain.NameValue{}},
}

const (
	mixedTools  = `{"name":"tools","command":"/opt/tools/bin/server","args":["serve"],"env":[{"name":"TOKEN","value":"t0k"}]}` + "\n"
	mixedAPI    = `{"type":"http","name":"api","url":"https://api.example.com/mcp","headers":[{"name":"Authorization","value":"Bearer abc"},{"name":"X-Trace","value":"1"}]}` + "\n"
	mixedInfer  = `{"type":"http","name":"inferred-http","url":"https://infer.example.com/mcp","headers":[]}` + "\n"
	mixedEvents = `{"type":"sse","name":"events","url":"https://events.example.com/sse","headers":[]}` + "\n"
	mixedLast   = `{"name":"last","command":"/bin/last","args":[],"env":[]}` + "\n"
)

var generatedServers = []domain.MCPServer{
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
}

const generatedWire = `{"name":"local","command":"/usr/bin/local-mcp","args":["--stdio"],"env":[]}
{"name":"sortie-tools","command":"/usr/local/bin/sortie","args":["mcp-server","--workflow","/repo/WORKFLOW.md"],"env":[{"name":"SORTIE_ISSUE_ID","value":"abc-123"},{"name":"SORTIE_ISSUE_IDENTIFIER","value":"PROJ-7"},{"name":"SORTIE_WORKSPACE","value":"/ws/PROJ-7"}]}
`

// listing writes one declaration per line, byte for byte.
func listing(wire []json.RawMessage) string {
	var b strings.Builder
	for _, w := range wire {
		b.Write(w)
		b.WriteByte('\n')
	}
	return b.String()
}

// deliverable keeps the servers a runtime advertising http and sse can
// take, the way the application chooses before it encodes.
func deliverable(servers []domain.MCPServer, http, sse bool) []domain.MCPServer {
	var out []domain.MCPServer
	for _, s := range servers {
		if s.Deliverable(http, sse) {
			out = append(out, s)
		}
	}
	return out
}

func TestEncodeMCPServersGolden(t *testing.T) {
	tests := []struct {
		name      string
		servers   []domain.MCPServer
		http, sse bool
		want      string
	}{
		{"stdio", stdioServers, false, false, stdioWire},
		{"stdio with every capability", stdioServers, true, true, stdioWire},
		{"mixed, no capabilities", mixedServers, false, false, mixedTools + mixedLast},
		{"mixed, http", mixedServers, true, false, mixedTools + mixedAPI + mixedInfer + mixedLast},
		{"mixed, sse", mixedServers, false, true, mixedTools + mixedEvents + mixedLast},
		{"mixed, both", mixedServers, true, true, mixedTools + mixedAPI + mixedInfer + mixedEvents + mixedLast},
		{"empty", []domain.MCPServer{}, true, true, ""},
		{"generated, no capabilities", generatedServers, false, false, generatedWire},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wire := acpwire.EncodeMCPServers(deliverable(tt.servers, tt.http, tt.sse))
			require.NotNil(t, wire)
			for _, w := range wire {
				require.True(t, json.Valid(w), "invalid wire JSON %s", w)
			}
			assert.Equal(t, tt.want, listing(wire))
		})
	}
}

func TestEncodeMCPServer(t *testing.T) {
	tests := []struct {
		name   string
		server domain.MCPServer
		want   string
	}{
		{"stdio empty lists", domain.MCPServer{Name: "a", Transport: domain.MCPStdio, Command: "/bin/a"},
			`{"name":"a","command":"/bin/a","args":[],"env":[]}`},
		{"empty transport is stdio", domain.MCPServer{Name: "a", Command: "/bin/a", Args: []string{"x"}},
			`{"name":"a","command":"/bin/a","args":["x"],"env":[]}`},
		{"stdio env pairs in order", domain.MCPServer{Name: "a", Transport: domain.MCPStdio, Command: "c",
			Env: []domain.NameValue{{Name: "B", Value: "2"}, {Name: "A", Value: "1"}}},
			`{"name":"a","command":"c","args":[],"env":[{"name":"B","value":"2"},{"name":"A","value":"1"}]}`},
		{"http", domain.MCPServer{Name: "h", Transport: domain.MCPHTTP, URL: "https://h/mcp?a=1&b=<2>",
			Headers: []domain.NameValue{{Name: "Authorization", Value: "Bearer t"}}},
			`{"type":"http","name":"h","url":"https://h/mcp?a=1&b=<2>","headers":[{"name":"Authorization","value":"Bearer t"}]}`},
		{"sse no headers", domain.MCPServer{Name: "s", Transport: domain.MCPSSE, URL: "https://s"},
			`{"type":"sse","name":"s","url":"https://s","headers":[]}`},
		{"stdio ignores url and headers", domain.MCPServer{Name: "a", Command: "c", URL: "https://x",
			Headers: []domain.NameValue{{Name: "H", Value: "v"}}},
			`{"name":"a","command":"c","args":[],"env":[]}`},
		{"http ignores command, args and env", domain.MCPServer{Name: "h", Transport: domain.MCPHTTP, URL: "https://h",
			Command: "c", Args: []string{"x"}, Env: []domain.NameValue{{Name: "E", Value: "v"}}},
			`{"type":"http","name":"h","url":"https://h","headers":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wire := acpwire.EncodeMCPServers([]domain.MCPServer{tt.server})
			require.Len(t, wire, 1)
			assert.Equal(t, tt.want, string(wire[0]))
		})
	}
}

func TestEncodeMCPServersNeverNil(t *testing.T) {
	for _, in := range [][]domain.MCPServer{nil, {}} {
		wire := acpwire.EncodeMCPServers(in)
		require.NotNil(t, wire)
		assert.Empty(t, wire)
		b, err := json.Marshal(acpwire.NewSessionRequest{CWD: "/w", MCPServers: wire})
		require.NoError(t, err)
		assert.JSONEq(t, `{"cwd":"/w","mcpServers":[]}`, string(b))
	}
}

func TestEncodeMCPServersKeepsOrder(t *testing.T) {
	names := []string{"zulu", "alpha", "mike", "bravo", "yankee"}
	var servers []domain.MCPServer
	for _, n := range names {
		servers = append(servers, domain.MCPServer{Name: n, Command: "c"})
	}
	wire := acpwire.EncodeMCPServers(servers)
	require.Len(t, wire, len(names))
	for i, w := range wire {
		var v struct{ Name string }
		require.NoError(t, json.Unmarshal(w, &v))
		assert.Equal(t, names[i], v.Name)
	}
}

// TestEncodeMCPServersRoundTrip decodes each declaration back and checks
// that nothing was lost or reshaped.
func TestEncodeMCPServersRoundTrip(t *testing.T) {
	all := append(append(append([]domain.MCPServer{}, stdioServers...), mixedServers...), generatedServers...)
	wire := acpwire.EncodeMCPServers(all)
	require.Len(t, wire, len(all))
	for i, w := range wire {
		var v struct {
			Type    *string            `json:"type"`
			Name    string             `json:"name"`
			Command string             `json:"command"`
			Args    []string           `json:"args"`
			Env     []domain.NameValue `json:"env"`
			URL     string             `json:"url"`
			Headers []domain.NameValue `json:"headers"`
		}
		require.NoError(t, json.Unmarshal(w, &v))
		s := all[i]
		assert.Equal(t, s.Name, v.Name)
		if s.Transport == domain.MCPStdio {
			assert.Nil(t, v.Type, "stdio carries no type")
			assert.Equal(t, s.Command, v.Command)
			assert.Equal(t, s.Args, v.Args)
			assert.Equal(t, s.Env, v.Env)
			continue
		}
		require.NotNil(t, v.Type)
		assert.Equal(t, string(s.Transport), *v.Type)
		assert.Equal(t, s.URL, v.URL)
		assert.Equal(t, s.Headers, v.Headers)
	}
}
