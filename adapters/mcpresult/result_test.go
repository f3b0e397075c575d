package mcpresult_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/acpdrive/acpdrive/adapters/mcpresult"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// serveArg makes the test binary run the result server (mcpresult.Main),
// so the tests drive it as a real process, as a runtime would.
const serveArg = "serve-result"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == serveArg {
		os.Exit(mcpresult.Main(context.Background(), os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	goleak.VerifyTestMain(m)
}

const waitFor = 20 * time.Second

const schema = `{"type":"object","properties":{"done":{"type":"boolean"}},"required":["done"]}`

func textOf(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// TestResultToolValidatesAndReports: the declared server offers one tool
// whose input schema is the schema; an invalid call is answered with the
// validation errors and records nothing; a valid call is recorded before
// it is answered, and Take hands it over once
// (docs/behaviour.md#structured-results).
func TestResultToolValidatesAndReports(t *testing.T) {
	s := mcpresult.New(mcpresult.Options{Command: []string{os.Args[0], serveArg}})
	a, err := s.Arm(context.Background(), json.RawMessage(schema), ports.MCPTransports{})
	require.NoError(t, err)
	defer func() { require.NoError(t, a.Release()) }()
	srv := a.Server()
	assert.Equal(t, domain.ResultServerName, srv.Name)
	assert.Equal(t, domain.MCPStdio, srv.Transport)

	cmd := exec.Command(srv.Command, srv.Args...)
	cmd.Env = os.Environ()
	for _, e := range srv.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	cmd.Stderr = os.Stderr
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
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
	assert.Contains(t, why, domain.MsgResultInvalidPrefix, "but its errors")

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: domain.ResultToolName, Arguments: map[string]any{"done": true}})
	require.NoError(t, err)
	assert.False(t, res.IsError, textOf(res))
	assert.Equal(t, mcpresult.MsgRecorded, textOf(res))
	v, why = a.Take()
	require.NotNil(t, v, "recorded before the call was answered")
	assert.Empty(t, why)
	assert.JSONEq(t, `{"done":true}`, string(v))
	v, why = a.Take()
	assert.Nil(t, v, "taken once")
	assert.Empty(t, why)
}

// TestResultToolNotAsked: while the session's turn does not ask for the
// result (Ask(false)), a call, valid or not, is answered
// domain.MsgResultNotAsked as a tool error and nothing is kept; asked
// again, a valid call is recorded (docs/behaviour.md#structured-results).
func TestResultToolNotAsked(t *testing.T) {
	s := mcpresult.New(mcpresult.Options{Command: []string{os.Args[0], serveArg}})
	a, err := s.Arm(context.Background(), json.RawMessage(schema), ports.MCPTransports{})
	require.NoError(t, err)
	defer func() { require.NoError(t, a.Release()) }()
	srv := a.Server()
	cmd := exec.Command(srv.Command, srv.Args...)
	cmd.Env = os.Environ()
	for _, e := range srv.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	cmd.Stderr = os.Stderr
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	defer cs.Close()

	a.Ask(false)
	for _, args := range []map[string]any{{"done": true}, {"done": "yes"}} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: domain.ResultToolName, Arguments: args})
		require.NoError(t, err)
		assert.True(t, res.IsError, "%v", args)
		assert.Equal(t, domain.MsgResultNotAsked, textOf(res), "%v", args)
	}
	v, why := a.Take()
	assert.Nil(t, v, "nothing kept while not asked")
	assert.Empty(t, why, "not even a validation error")

	a.Ask(true)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: domain.ResultToolName, Arguments: map[string]any{"done": true}})
	require.NoError(t, err)
	assert.Equal(t, mcpresult.MsgRecorded, textOf(res))
	v, _ = a.Take()
	assert.JSONEq(t, `{"done":true}`, string(v))
}
