package refagent

import (
	"encoding/json"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// httpCapabilities is the initialize answer's agentCapabilities of the
// result-tool-http scenario: the default's, with mcpCapabilities.http.
const httpCapabilities = `{"loadSession":false,"promptCapabilities":{},"mcpCapabilities":{"http":true,"sse":false}}`

// resultToolHTTP is the result-tool-http scenario: the result-tool
// scenario on an agent that takes MCP servers over HTTP, so a client may
// serve its result tool from its own process.
var resultToolHTTP = scenario{
	"Advertises mcpCapabilities.http; the default turn is submit-result, which calls submit_result of acpdrive-result over the transport acpdrive declared it on (HTTP when it served it from its own process, else stdio).",
	func(s *Script) {
		s.Initialize = &Initialize{AgentCapabilities: json.RawMessage(httpCapabilities)}
		s.DefaultTurn = "submit-result"
	},
}

// takesHTTP says whether this agent advertised mcpCapabilities.http: only
// then does an mcpCall step reach an HTTP server, as a runtime would.
func (a *agent) takesHTTP() bool {
	var c struct {
		MCPCapabilities struct {
			HTTP bool `json:"http"`
		} `json:"mcpCapabilities"`
	}
	_ = json.Unmarshal(a.agentCapabilities(), &c)
	return c.MCPCapabilities.HTTP
}

// httpTransport is the Streamable HTTP client transport of a declared
// HTTP server: its URL, every request carrying its headers. release
// closes the transport's idle connections.
func httpTransport(url string, headers []nameValue) (mcp.Transport, func(), bool) {
	base := &http.Transport{Proxy: nil}
	client := &http.Client{Transport: withHeaders{headers: headers, base: base}}
	t := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: client, DisableStandaloneSSE: true}
	return t, base.CloseIdleConnections, true
}

// withHeaders sets the declared headers on every request.
type withHeaders struct {
	headers []nameValue
	base    http.RoundTripper
}

func (w withHeaders) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for _, h := range w.headers {
		r.Header.Set(h.Name, h.Value)
	}
	return w.base.RoundTrip(r)
}
