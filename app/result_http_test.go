package app_test

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/mcpresult"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
)

// withHTTPResultServer serves the result tool from the test's own
// process over HTTP: no binary is re-executed.
func withHTTPResultServer() option {
	return func(o *app.Options) { o.ResultServer = mcpresult.New(mcpresult.Options{HTTP: true}) }
}

// declaredResult is the result server session/new declared, nil when none.
func declaredResult(t *testing.T, h *harness) map[string]any {
	t.Helper()
	news := received(t, h.agentLg, "session/new")
	require.NotEmpty(t, news)
	var req struct {
		Params struct {
			MCPServers []map[string]any `json:"mcpServers"`
		} `json:"params"`
	}
	require.NoError(t, json.Unmarshal(news[0].Message, &req))
	for _, s := range req.Params.MCPServers {
		if s["name"] == domain.ResultServerName {
			return s
		}
	}
	return nil
}

// postInitialize posts an MCP initialize request to url with auth as
// its Authorization header ("" for none) and returns the status.
func postInitialize(t *testing.T, url, auth string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	resp, err := c.Do(req)
	if err != nil {
		return 0
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// TestResultToolOverHTTP: a library program with no re-executing binary
// gets the structured result through the tool. The runtime (a real
// reference-agent process) advertises mcpCapabilities.http, so session/new
// declares the result server as an HTTP server on 127.0.0.1 served by
// acpdrive's own process; the agent's valid call is the turn's result
// (source tool), an invalid call is answered with the validation errors
// and a corrected one taken, only invalid calls end result_missing with
// the last validation error; another token, in the path or the header,
// is refused; after Stop nothing listens (docs/behaviour.md#structured-results).
func TestResultToolOverHTTP(t *testing.T) {
	t.Parallel()
	h := startProc(t, script(t, "result-tool-http.json"), withSchema(1), withHTTPResultServer())
	srv := declaredResult(t, h)
	require.NotNil(t, srv, "the result server is declared")
	assert.Equal(t, "http", srv["type"])
	url, _ := srv["url"].(string)
	require.True(t, strings.HasPrefix(url, "http://127.0.0.1:"), url)
	assert.NotContains(t, srv, "command")
	headers, _ := srv["headers"].([]any)
	require.Len(t, headers, 1)
	bearer, _ := headers[0].(map[string]any)["value"].(string)
	require.True(t, strings.HasPrefix(bearer, "Bearer "), "a bearer token")

	res := h.turn("#valid go")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.JSONEq(t, `{"done":true,"branch":"fix-32"}`, string(res.Result), res.ResultMissing+"\n"+thoughts(h))
	assert.Equal(t, domain.ResultSourceTool, res.ResultSource)
	assert.Contains(t, promptTexts(t, h)[0], domain.ResultToolName, "the prompt names the tool")

	res = h.turn("#fix go")
	assert.JSONEq(t, `{"done":true}`, string(res.Result), res.ResultMissing+"\n"+thoughts(h))
	assert.Equal(t, domain.ResultSourceTool, res.ResultSource)
	assert.Contains(t, thoughts(h), "mcpCall submit_result error: "+domain.MsgResultInvalidPrefix)

	res = h.turn("#bad go")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome)
	assert.Nil(t, res.Result)
	assert.True(t, strings.HasPrefix(res.ResultMissing, domain.MsgResultInvalidPrefix), "the tool's last validation error: %s", res.ResultMissing)
	require.Len(t, promptTexts(t, h), 4, "one follow-up after #bad")

	token := strings.TrimPrefix(bearer, "Bearer ")
	other := strings.Repeat("0", len(token))
	assert.Equal(t, http.StatusNotFound, postInitialize(t, strings.Replace(url, token, other, 1), bearer), "another token in the path")
	assert.Equal(t, http.StatusUnauthorized, postInitialize(t, url, "Bearer "+other), "another bearer token")
	assert.Equal(t, http.StatusOK, postInitialize(t, url, bearer), "the declared URL and header")

	h.stop()
	assert.Equal(t, 0, postInitialize(t, url, bearer), "stopped: nothing listens")
}

// TestResultToolHTTPWhenTaken: the HTTP server is declared only to a
// runtime that advertises mcpCapabilities.http. One that does not gets
// the stdio server when a command is configured, else none, and the
// result comes from the reply; "tool servers" is not lowered for it
// (docs/behaviour.md#structured-results).
func TestResultToolHTTPWhenTaken(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		scenario  string // "" for structured-result.json, whose agent does not take HTTP
		server    mcpresult.Options
		transport string // "" when none is declared
	}{
		{"http taken", "result-tool-http", mcpresult.Options{HTTP: true}, "http"},
		{"http not taken, no command", "", mcpresult.Options{HTTP: true}, ""},
		{"http not taken, stdio command", "", mcpresult.Options{HTTP: true, Command: []string{testbin.Path(t), mcpresult.SubcommandName}}, "stdio"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			args := script(t, "structured-result.json")
			if c.scenario != "" {
				args = []string{"--scenario", c.scenario}
			}
			server := mcpresult.New(c.server)
			h := start(t, args, withSchema(0), func(o *app.Options) { o.ResultServer = server })
			srv := declaredResult(t, h)
			if c.transport == "" {
				assert.Nil(t, srv, "no result server declared")
			} else {
				require.NotNil(t, srv)
				typ, _ := srv["type"].(string)
				assert.Equal(t, c.transport, cmp.Or(typ, "stdio"))
			}
			assert.NotEqual(t, domain.CapGap, h.sess.Capabilities().State(domain.CapToolServers), "the result server lowers nothing")
			if c.scenario != "" {
				res := h.turn("go")
				assert.Equal(t, domain.ResultSourceTool, res.ResultSource, res.ResultMissing+"\n"+thoughts(h))
				return
			}
			res := h.turn("#result go")
			assert.JSONEq(t, `{"done":true,"branch":"fix-32"}`, string(res.Result), res.ResultMissing)
			assert.Equal(t, domain.ResultSourceReply, res.ResultSource)
		})
	}
}
