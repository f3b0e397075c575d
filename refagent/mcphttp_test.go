package refagent

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPCallOverHTTP: an agent that advertises mcpCapabilities.http
// reaches an HTTP MCP server declared in session/new at its URL, every
// request with the declared headers, and reports the tool's answer; one
// that does not advertise it leaves the server alone, as a runtime would.
func TestMCPCallOverHTTP(t *testing.T) {
	cases := []struct {
		name string
		http bool
		want string
	}{
		{"advertised", true, "mcpCall echo ok: got 7"},
		{"not advertised", false, "mcpCall echo error: no stdio MCP server named tools was declared"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			var auths []string
			server := mcp.NewServer(&mcp.Implementation{Name: "tools", Version: "1"}, nil)
			server.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
				func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					var args struct{ N int }
					_ = json.Unmarshal(req.Params.Arguments, &args)
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "got " + jsonNumber(args.N)}}}, nil
				})
			handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				auths = append(auths, r.Header.Get("Authorization"))
				mu.Unlock()
				handler.ServeHTTP(w, r)
			}))
			defer hs.Close()

			caps := `{"loadSession":false,"promptCapabilities":{},"mcpCapabilities":{"http":` + strconv.FormatBool(c.http) + `,"sse":false}}`
			script := writeScript(t, `{"initialize":{"agentCapabilities":`+caps+`},"defaultTurn":"call","turns":{"call":{"steps":[`+
				`{"step":"mcpCall","mcpServer":"tools","mcpTool":"echo","mcpArguments":{"n":7}},{"step":"stop","stopReason":"end_turn"}]}}}`)
			h := startAgent(t, "--script", script)
			h.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)
			h.next()
			h.send(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[` +
				`{"type":"http","name":"tools","url":"` + hs.URL + `/mcp","headers":[{"name":"Authorization","value":"Bearer t"}]}]}}`)
			h.next()
			h.send(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"ref-1","prompt":[{"type":"text","text":"go"}]}}`)
			var thought string
			for {
				line := h.next()
				if strings.Contains(line, `"mcpCall `) {
					var m struct {
						Params struct {
							Update struct {
								Content struct {
									Text string `json:"text"`
								} `json:"content"`
							} `json:"update"`
						} `json:"params"`
					}
					_ = json.Unmarshal([]byte(line), &m)
					thought = m.Params.Update.Content.Text
				}
				if strings.Contains(line, `"id":2`) && strings.Contains(line, `"stopReason"`) {
					break
				}
			}
			if thought != c.want {
				t.Fatalf("thought %q, want %q", thought, c.want)
			}
			if code := h.closeStdin(); code != 0 {
				t.Fatalf("exit %d", code)
			}
			mu.Lock()
			defer mu.Unlock()
			if c.http && (len(auths) == 0 || auths[0] != "Bearer t") {
				t.Fatalf("requests' Authorization headers %q, want the declared one", auths)
			}
			if !c.http && len(auths) > 0 {
				t.Fatalf("an agent without http reached the server: %d requests", len(auths))
			}
		})
	}
}
