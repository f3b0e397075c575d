package app_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/mcp"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
)

func withMCPPath(path string) option {
	return func(o *app.Options) {
		o.Settings.MCPConfigPath = path
		o.MCPSource = mcp.New(mcp.Options{})
	}
}

func withMCP(t *testing.T, file string) option { return withMCPPath(testdata(t, file)) }

// declared returns the mcpServers of the first request of this method the
// agent received.
func declared(t *testing.T, agentLg, method string) []map[string]any {
	t.Helper()
	reqs := received(t, agentLg, method)
	require.NotEmpty(t, reqs, method)
	var msg struct {
		Params struct {
			MCPServers []map[string]any `json:"mcpServers"`
		} `json:"params"`
	}
	require.NoError(t, json.Unmarshal(reqs[0].Message, &msg))
	return msg.Params.MCPServers
}

func names(servers []map[string]any) []string {
	out := []string{}
	for _, s := range servers {
		out = append(out, s["name"].(string))
	}
	return out
}

func TestMCPServersWithheldWithoutHTTPCapability(t *testing.T) {
	t.Parallel()
	h := start(t, nil, withMCP(t, "mcp.json"))
	servers := declared(t, h.agentLg, "session/new")
	assert.Equal(t, []string{"files"}, names(servers), "the http server is withheld, the disabled one dropped")
	assert.Equal(t, "/usr/bin/env", servers[0]["command"])
	assert.Equal(t, []any{"mcp-files", "--stdio"}, servers[0]["args"])
	assert.Equal(t, []any{map[string]any{"name": "API_KEY", "value": "k"}}, servers[0]["env"])
	_, hasType := servers[0]["type"]
	assert.False(t, hasType, "a stdio declaration carries no type")
	assert.Equal(t, domain.CapGap, h.sess.Capabilities().State(domain.CapToolServers))
	h.turn("hi")
	assert.Contains(t, h.rec.Shape(),
		"notification:this session started with a declared capability gap in: tool servers, token counts, session continuation")
}

func TestMCPServersDeliveredWithHTTPCapability(t *testing.T) {
	t.Parallel()
	h := start(t, []string{"--scenario", "full-caps"}, withMCP(t, "mcp.json"))
	servers := declared(t, h.agentLg, "session/new")
	assert.Equal(t, []string{"files", "tracker"}, names(servers))
	assert.Equal(t, "http", servers[1]["type"])
	assert.Equal(t, "http://127.0.0.1:9/mcp", servers[1]["url"])
	assert.Equal(t, domain.CapProtocol, h.sess.Capabilities().State(domain.CapToolServers))
}

func TestNoMCPConfigDeclaresAnEmptyList(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	reqs := received(t, h.agentLg, "session/new")
	require.Len(t, reqs, 1)
	assert.Contains(t, string(reqs[0].Message), `"mcpServers":[]`)
}

func TestMCPServersOnContinuation(t *testing.T) {
	t.Parallel()
	h := start(t, []string{"--scenario", "resume"}, withMCP(t, "mcp.json"), withResume("saved-1"))
	assert.Equal(t, "session/resume", h.sess.Route())
	assert.Equal(t, []string{"files"}, names(declared(t, h.agentLg, "session/resume")))
}

func TestBrokenMCPConfigFailsBeforeLaunch(t *testing.T) {
	t.Parallel()
	bad := filepath.Join(t.TempDir(), "mcp.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"mcpServers": {"x": `), 0o600))
	o, rec, _, agentLg := agentOptions(t, nil, withMCPPath(bad))
	ae := startErr(t, o, rec)
	assert.Equal(t, domain.KindResponseError, ae.Kind)
	assert.True(t, strings.HasPrefix(ae.Message, "parse MCP config: "+bad), ae.Message)
	_, err := os.Stat(agentLg)
	assert.True(t, os.IsNotExist(err), "no process was started")
	assert.Zero(t, rec.All()[0].AgentPID)
}

func TestReservedMCPNameFailsBeforeLaunch(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "mcp.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"mcpServers": {"orchestrator-tools": {"command": "/bin/true"}}}`), 0o600))
	o, rec, _, agentLg := agentOptions(t, nil, withMCPPath(file))
	o.Settings.ReservedMCPName = "orchestrator-tools"
	ae := startErr(t, o, rec)
	assert.Equal(t, domain.KindResponseError, ae.Kind)
	assert.Equal(t, "parse MCP config: "+file+`: declares a server named "orchestrator-tools", a name reserved for the caller's own tools`, ae.Message)
	_, err := os.Stat(agentLg)
	assert.True(t, os.IsNotExist(err), "no process was started")
}

// TestNoMCPNameIsReservedUnlessTold: the library reserves no server name
// of its own (docs/behaviour.md#mcp): a file declaring any name starts.
func TestNoMCPNameIsReservedUnlessTold(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "mcp.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"mcpServers": {"sortie-tools": {"command": "/bin/true"}}}`), 0o600))
	h := start(t, nil, withMCPPath(file))
	res := h.turn("hello")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
}

// TestBadWorkspaceIsReportedBeforeABrokenMCPConfig: start-up steps 1 and 2
// precede step 3 (S1).
func TestBadWorkspaceIsReportedBeforeABrokenMCPConfig(t *testing.T) {
	t.Parallel()
	o, rec, _, _ := agentOptions(t, nil, withMCPPath(filepath.Join(t.TempDir(), "missing.json")))
	o.Workspace = "/nonexistent/acpdrive"
	ae := startErr(t, o, rec)
	assert.Equal(t, domain.KindInvalidWorkspaceCWD, ae.Kind)
}

func TestToolServersGatedNoticeOncePerSession(t *testing.T) {
	t.Parallel()
	h := start(t, nil, withMCP(t, "mcp.json"))
	for range 2 {
		res := h.turn("#permission-refusable")
		require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	}
	var gated int
	for _, ev := range h.rec.All() {
		if ev.Message == domain.MsgToolServersGated {
			gated++
		}
	}
	assert.Equal(t, 1, gated)
	assert.Equal(t, 1, strings.Count(h.logs.String(), "a tool call was gated by consent in a session that delivered tool servers"))
}

func TestNoGatedNoticeWithoutToolServers(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	h.turn("#permission-refusable")
	for _, ev := range h.rec.All() {
		assert.NotEqual(t, domain.MsgToolServersGated, ev.Message)
	}
}

func TestVerificationSessionDeclaresNoServers(t *testing.T) {
	t.Parallel()
	o, _, _, agentLg := agentOptions(t, nil, withMCP(t, "mcp.json"))
	o.VerifyCredential = true
	sess, err := app.Start(context.Background(), o)
	require.NoError(t, err)
	require.NoError(t, sess.Stop(context.Background()))
	news := received(t, agentLg, "session/new")
	require.Len(t, news, 2)
	assert.Contains(t, string(news[0].Message), `"mcpServers":[]`, "the verification session")
	assert.Contains(t, string(news[1].Message), `"name":"files"`, "the working session")
}
