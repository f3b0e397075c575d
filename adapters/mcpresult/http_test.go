package mcpresult_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/mcpresult"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// headerTransport adds the declared server's headers to every request,
// as a runtime does with an HTTP server's headers.
type headerTransport struct {
	headers []domain.NameValue
	base    http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for _, nv := range h.headers {
		r.Header.Set(nv.Name, nv.Value)
	}
	return h.base.RoundTrip(r)
}

// connectHTTP connects an MCP client to url with headers.
func connectHTTP(ctx context.Context, t *testing.T, url string, headers []domain.NameValue) (*mcp.ClientSession, error) {
	t.Helper()
	base := &http.Transport{}
	t.Cleanup(base.CloseIdleConnections)
	hc := &http.Client{Transport: headerTransport{headers: headers, base: base}}
	return mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, DisableStandaloneSSE: true}, nil)
}

// armHTTP arms an HTTP-serving result server for a runtime that takes
// HTTP.
func armHTTP(t *testing.T) ports.ArmedResult {
	t.Helper()
	s := mcpresult.New(mcpresult.Options{HTTP: true})
	a, err := s.Arm(context.Background(), json.RawMessage(schema), ports.MCPTransports{HTTP: true})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, a.Release()) })
	return a
}

// TestResultHTTPValidatesAndKeeps: over HTTP, served from this process,
// the tool validates as the stdio server does, a valid call is kept before
// it is answered, a call while no turn asks is answered not-asked and
// kept nowhere (docs/behaviour.md#structured-results).
func TestResultHTTPValidatesAndKeeps(t *testing.T) {
	a := armHTTP(t)
	srv := a.Server()
	assert.Equal(t, domain.ResultServerName, srv.Name)
	assert.Equal(t, domain.MCPHTTP, srv.Transport)
	assert.True(t, strings.HasPrefix(srv.URL, "http://127.0.0.1:"), srv.URL)
	assert.Empty(t, srv.Command)
	require.Len(t, srv.Headers, 1)
	assert.Equal(t, "Authorization", srv.Headers[0].Name)

	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	cs, err := connectHTTP(ctx, t, srv.URL, srv.Headers)
	require.NoError(t, err)
	defer cs.Close()

	tools, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	require.Len(t, tools.Tools, 1)
	assert.Equal(t, domain.ResultToolName, tools.Tools[0].Name)
	got, err := json.Marshal(tools.Tools[0].InputSchema)
	require.NoError(t, err)
	assert.JSONEq(t, schema, string(got))

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: domain.ResultToolName, Arguments: map[string]any{"done": "yes"}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, textOf(res), domain.MsgResultInvalidPrefix)
	v, why := a.Take()
	assert.Nil(t, v, "an invalid call records no result")
	assert.Contains(t, why, domain.MsgResultInvalidPrefix)

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: domain.ResultToolName, Arguments: map[string]any{"done": true}})
	require.NoError(t, err)
	assert.Equal(t, mcpresult.MsgRecorded, textOf(res))
	v, why = a.Take()
	assert.JSONEq(t, `{"done":true}`, string(v), "kept before the call was answered")
	assert.Empty(t, why)

	a.Ask(false)
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: domain.ResultToolName, Arguments: map[string]any{"done": true}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Equal(t, domain.MsgResultNotAsked, textOf(res))
	v, why = a.Take()
	assert.Nil(t, v)
	assert.Empty(t, why)
}

// TestResultHTTPRefusesOtherTokens: a request to another path, or with
// an Authorization header naming another token, never reaches the tool;
// after Release nothing listens.
func TestResultHTTPRefusesOtherTokens(t *testing.T) {
	a := armHTTP(t)
	srv := a.Server()
	base, _, _ := strings.Cut(strings.TrimPrefix(srv.URL, "http://"), "/")
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	post := func(url string, auth string) int {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	defer http.DefaultClient.CloseIdleConnections()
	wrongToken := "http://" + base + "/" + domain.ResultServerName + "/" + strings.Repeat("0", 64)
	assert.Equal(t, http.StatusNotFound, post(wrongToken, srv.Headers[0].Value), "another token in the path")
	assert.Equal(t, http.StatusNotFound, post("http://"+base+"/mcp", ""), "another path")
	assert.Equal(t, http.StatusUnauthorized, post(srv.URL, "Bearer "+strings.Repeat("0", 64)), "another bearer token")
	assert.Equal(t, http.StatusOK, post(srv.URL, srv.Headers[0].Value), "the declared URL and header")

	cs, err := connectHTTP(ctx, t, srv.URL, []domain.NameValue{{Name: "Authorization", Value: "Bearer nope"}})
	if err == nil {
		_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: domain.ResultToolName, Arguments: map[string]any{"done": true}})
		_ = cs.Close()
	}
	require.Error(t, err, "an MCP client with another token gets nowhere")
	v, why := a.Take()
	assert.Nil(t, v)
	assert.Empty(t, why)

	require.NoError(t, a.Release())
	require.NoError(t, a.Release(), "idempotent")
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(body))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		_ = resp.Body.Close()
	}
	require.Error(t, err, "released: nothing listens")
}

// TestResultServerChoosesTransport: HTTP for a runtime that takes it;
// else the stdio command when one is set; else not served
// (ports.ErrResultNotServed), and without HTTP or a command, ErrNoCommand.
func TestResultServerChoosesTransport(t *testing.T) {
	cmd := []string{os.Args[0], serveArg}
	cases := []struct {
		name  string
		opts  mcpresult.Options
		takes ports.MCPTransports
		want  domain.MCPTransport
		err   error
	}{
		{"http taken", mcpresult.Options{HTTP: true, Command: cmd}, ports.MCPTransports{HTTP: true}, domain.MCPHTTP, nil},
		{"http not taken, stdio fallback", mcpresult.Options{HTTP: true, Command: cmd}, ports.MCPTransports{SSE: true}, domain.MCPStdio, nil},
		{"http not taken, no command", mcpresult.Options{HTTP: true}, ports.MCPTransports{}, "", ports.ErrResultNotServed},
		{"stdio only, http taken", mcpresult.Options{Command: cmd}, ports.MCPTransports{HTTP: true}, domain.MCPStdio, nil},
		{"nothing", mcpresult.Options{}, ports.MCPTransports{HTTP: true}, "", mcpresult.ErrNoCommand},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := mcpresult.New(c.opts).Arm(context.Background(), json.RawMessage(schema), c.takes)
			if c.err != nil {
				require.Error(t, err)
				assert.True(t, errors.Is(err, c.err), err.Error())
				return
			}
			require.NoError(t, err)
			defer func() { require.NoError(t, a.Release()) }()
			assert.Equal(t, c.want, a.Server().Transport)
		})
	}
}
