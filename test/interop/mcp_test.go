//go:build interop

package interop

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/mcp"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// MCP delivery through real runtimes (issue #5): the servers of an MCP
// configuration file (the common mcp.json format) reach the runtime on
// session/new, rendered after the handshake. Our own MCP server
// (test/mcpserver, on the official MCP Go SDK) logs what it receives.
//
//   - Gemini CLI with --approval-mode yolo gets the server over stdio and
//     calls its tool when the fake model asks.
//   - The Claude adapter advertises mcpCapabilities.http, so it gets the
//     server over streamable HTTP on 127.0.0.1 and connects to it.
//   - The reference agent advertises no http: the http server is withheld
//     from session/new and "tool servers" is a gap in the notice.

// noteText is what the fake model asks record_note to record.
const noteText = "hello from interop"

// noteCall is the call the MCP server must log.
const noteCall = `record_note {"text":"` + noteText + `"}`

// mcpServerDecl is one server of an mcp.json file.
type mcpServerDecl struct {
	Type    string            `json:"type,omitempty"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// writeMCPConfig writes an mcp.json file (servers in name order).
func writeMCPConfig(t *testing.T, path string, servers map[string]mcpServerDecl) {
	t.Helper()
	raw, err := json.MarshalIndent(map[string]any{"mcpServers": servers}, "", "  ")
	require.NoError(t, err)
	writeFile(t, path, string(raw)+"\n")
}

// writeMCPWorkflow writes dir/WORKFLOW.md naming the command and, relative
// to it, the MCP configuration dir/mcp.json; it returns its path.
func writeMCPWorkflow(t *testing.T, dir string, command []string) string {
	t.Helper()
	words, err := json.Marshal(command) // a JSON array is a YAML flow sequence
	require.NoError(t, err)
	path := filepath.Join(dir, "WORKFLOW.md")
	writeFile(t, path, "---\nagent:\n  kind: agent-client-protocol\n  command: "+string(words)+
		"\nagent-client-protocol:\n  mcp_config: ./mcp.json\n---\nYou are working on the interop suite.\n")
	return path
}

// withMCP delivers the MCP configuration at path through the product's
// source (adapters/mcp).
func withMCP(path string) optFn {
	return func(o *app.Options) {
		o.Settings.MCPConfigPath = path
		o.MCPSource = mcp.New(mcp.Options{Logger: o.Logger})
	}
}

// toolUpdates lists the tool_call and tool_call_update notifications on
// the wire as "<kind>:<status>" and whether a permission was requested.
func toolUpdates(t *testing.T, r *rig) (updates []string, permission bool) {
	t.Helper()
	for _, m := range r.wire.messages() {
		if !m.Out && m.Method == "session/request_permission" {
			permission = true
		}
		if k := m.updateKind(); k == "tool_call" || k == "tool_call_update" {
			var u struct {
				Update struct {
					Status string `json:"status"`
				} `json:"update"`
			}
			require.NoError(t, json.Unmarshal(m.Params, &u))
			updates = append(updates, strings.TrimSuffix(k+":"+u.Update.Status, ":"))
		}
	}
	return updates, permission
}

// assertToolLifecycle asserts the one tool call's updates (toolUpdates):
// announced by a tool_call, ended by one update reaching terminal, last.
// How many updates it sends in between, and with which interim status,
// is the runtime's.
func assertToolLifecycle(t *testing.T, updates []string, terminal string) {
	t.Helper()
	require.NotEmpty(t, updates, "no tool update")
	first := updates[0]
	assert.True(t, first == "tool_call" || strings.HasPrefix(first, "tool_call:"), "announced by a tool_call: %q", updates)
	assert.True(t, strings.HasSuffix(updates[len(updates)-1], ":"+terminal), "ends %s: %q", terminal, updates)
	for _, u := range updates[:len(updates)-1] {
		assert.False(t, strings.HasSuffix(u, ":completed") || strings.HasSuffix(u, ":failed"), "one terminal update: %q", updates)
	}
}

// TestMCPGeminiStdioToolCall: Gemini CLI 0.61.0 with --approval-mode yolo
// gets our MCP server as a stdio server (with an env pair) on session/new,
// starts it, lists its tools (declared to the model as
// mcp_<server>_<tool>) and, when the fake model asks, calls record_note
// without a permission request; the server logs the call, Gemini reports
// it as a tool_call (in_progress) then a completed tool_call_update titled
// "record_note (interop MCP Server)", kind other, and acpdrive emits
// tool_result:other:ok with that title.
func TestMCPGeminiStdioToolCall(t *testing.T) {
	t.Parallel()
	const geminiTool = "mcp_interop_record_note"
	want := []string{
		started,
		geminiGaps,
		"message_chunk*",
		"notification:Let me note that.",
		"tool_result:other:ok:record_note (interop MCP Server)",
		"message_chunk*",
		"notification:Noted.",
		"turn_completed",
	}
	setup := func(t *testing.T) (*rig, *fakes.Server, string, string) {
		r, srv := geminiRig(t, true)
		r.command = append(r.command, "--approval-mode", "yolo")
		mcpLog := filepath.Join(r.root, "mcp-stdio.jsonl")
		cfgDir := filepath.Join(r.root, "cfg")
		cfg := filepath.Join(cfgDir, "mcp.json")
		writeMCPConfig(t, cfg, map[string]mcpServerDecl{
			"interop": {Command: mcpServerBin(t), Args: []string{"-transport", "stdio"}, Env: map[string]string{"MCPSERVER_LOG": mcpLog}},
		})
		srv.Script(
			fakes.Reply{
				Text:  []string{"Let me note that."},
				Tool:  &fakes.ToolCall{Name: geminiTool, Args: map[string]any{"text": noteText}},
				Usage: fakes.Usage{Input: 100, Output: 9},
			},
			fakes.TextReply(fakes.Usage{Input: 130, Output: 6}, "Noted."),
		)
		return r, srv, cfg, mcpLog
	}
	check := func(t *testing.T, srv *fakes.Server, mcpLog string) {
		recs := readMCPLog(t, mcpLog)
		assert.Equal(t, []string{"initialize", "notifications/initialized", "tools/list", "tools/call"}, mcpMethods(recs))
		assert.Equal(t, []string{noteCall}, mcpCalls(recs), "the MCP server received the call with the model's arguments")
		for _, rec := range recs {
			assert.Equal(t, "stdio", rec.Transport)
			if rec.Method == "initialize" {
				assert.Equal(t, "gemini-cli-mcp-client/0.61.0", rec.Client)
			}
		}
		calls := srv.ModelCalls()
		require.Len(t, calls, 2, srv.Describe())
		assert.True(t, calls[0].BodyContains(`"name":"`+geminiTool+`"`), "the MCP tool is declared to the model")
		assert.True(t, calls[1].BodyContains(`"functionResponse":{"name":"`+geminiTool+`"`), "%s", calls[1].Body)
		assert.True(t, calls[1].BodyContains(`noted: `+noteText), "the tool's answer reaches the model")
		assert.Equal(t, 0, srv.Unscripted())
	}

	t.Run("library", func(t *testing.T) {
		r, srv, cfg, mcpLog := setup(t)
		sess := r.mustStart(withMCP(cfg))
		assert.Equal(t, []domain.CapabilityLabel{domain.CapTokenCounts}, sess.Capabilities().Gaps(), "a stdio server is always delivered")
		libraryTurn(t, r, sess, "note "+noteText, completed, want)
		check(t, srv, mcpLog)

		// session/new carried the stdio server in ACP's shape: no type,
		// env as name/value pairs.
		raw, err := json.Marshal(sessionNewMCPServers(t, r))
		require.NoError(t, err)
		assert.JSONEq(t, `[{"name":"interop","command":"`+mcpServerBin(t)+`","args":["-transport","stdio"],"env":[{"name":"MCPSERVER_LOG","value":"`+mcpLog+`"}]}]`, string(raw))
		resp, ok := r.wire.responseTo("session/new")
		require.True(t, ok)
		var nr struct {
			Modes struct {
				Current string `json:"currentModeId"`
			} `json:"modes"`
		}
		require.NoError(t, json.Unmarshal(resp.Result, &nr))
		assert.Equal(t, "yolo", nr.Modes.Current)
		updates, permission := toolUpdates(t, r)
		assert.False(t, permission, "yolo: no permission request")
		assertToolLifecycle(t, updates, "completed")
		assert.Equal(t, []string{"initialize", "session/new", "session/prompt"}, r.wire.methodsOut())
	})
	t.Run("cli", func(t *testing.T) {
		r, srv, cfg, mcpLog := setup(t)
		wf := writeMCPWorkflow(t, filepath.Dir(cfg), r.command)
		// The flags rig.cli passes come first; --workflow follows them, so
		// mcp_config comes from the WORKFLOW.md (its command is the same).
		run := cliCompleted(t, r, want, "--workflow", wf, "note "+noteText)
		assertGaps(t, run, "token counts")
		check(t, srv, mcpLog)
	})
}

// TestMCPClaudeHTTPServer: the Claude adapter 0.23.1 advertises
// mcpCapabilities.http, so acpdrive delivers our MCP server in HTTP mode
// (127.0.0.1, with a header) on session/new and "tool servers" stays
// delivered. Claude Code connects to it (initialize, tools/list, every
// HTTP request carrying the header) and declares its tool to the model as
// mcp__<server>__<tool>. Claude Code gates MCP tools by consent: refused
// (acpdrive is unattended), the call never reaches the server and acpdrive
// says once that delivered tools the runtime gates cannot be called; with
// the runtime's own settings allowing the tool, the call reaches the
// server over HTTP.
func TestMCPClaudeHTTPServer(t *testing.T) {
	t.Parallel()
	const claudeTool = "mcp__interop__record_note"
	wantAllowed := []string{
		started,
		claudeGaps,
		"message_chunk*",
		"notification:Let me note that.",
		"tool_result:other:ok",
		"message_chunk*",
		"notification:Noted.",
		"turn_completed",
	}
	setup := func(t *testing.T, allow bool) (*rig, *fakes.Server, *httpMCPServer, string) {
		r, srv := claudeRig(t)
		if allow {
			writeFile(t, filepath.Join(r.home, ".claude", "settings.json"),
				`{"permissions":{"allow":["`+claudeTool+`"]}}`)
		}
		hs := startHTTPMCPServer(t, r.root)
		cfg := filepath.Join(r.root, "cfg", "mcp.json")
		writeMCPConfig(t, cfg, map[string]mcpServerDecl{
			"interop": {Type: "http", URL: hs.URL, Headers: map[string]string{"X-Interop": "claude"}},
		})
		srv.Script(
			fakes.Reply{
				Text:  []string{"Let me note that."},
				Tool:  &fakes.ToolCall{ID: "toolu_mcp_1", Name: claudeTool, Args: map[string]any{"text": noteText}},
				Usage: fakes.Usage{Input: 100, Output: 9},
			},
			fakes.TextReply(fakes.Usage{Input: 130, Output: 6}, "Noted."),
		)
		return r, srv, hs, cfg
	}
	// check: Claude Code connected to the HTTP server, with the header,
	// and declared its tool to the model; the calls the server received.
	check := func(t *testing.T, srv *fakes.Server, hs *httpMCPServer, calls []string) {
		recs := readMCPLog(t, hs.Log)
		methods := mcpMethods(recs)
		require.GreaterOrEqual(t, len(methods), 3, "%v", methods)
		assert.Equal(t, []string{"initialize", "notifications/initialized", "tools/list"}, methods[:3])
		assert.Equal(t, calls, mcpCalls(recs))
		var httpReqs int
		for _, rec := range recs {
			assert.Equal(t, "http", rec.Transport)
			switch {
			case rec.Kind == "http":
				httpReqs++
				assert.Equal(t, "/mcp", rec.Path)
				assert.Equal(t, map[string]string{"X-Interop": "claude"}, rec.Headers, "the configured header reaches the server")
			case rec.Method == "initialize":
				assert.Equal(t, "claude-code/2.1.83", rec.Client)
			}
		}
		assert.Positive(t, httpReqs)
		model := srv.ModelCalls()
		require.Len(t, model, 2, srv.Describe())
		assert.True(t, model[0].BodyContains(`"name":"`+claudeTool+`"`), "the MCP tool is declared to the model")
		assert.Equal(t, 0, srv.Unscripted())
	}
	lastMessage := func(t *testing.T, req fakes.Request) string {
		msgs, _ := req.JSON()["messages"].([]any)
		require.NotEmpty(t, msgs)
		raw, err := json.Marshal(msgs[len(msgs)-1])
		require.NoError(t, err)
		return string(raw)
	}

	t.Run("library", func(t *testing.T) {
		r, srv, hs, cfg := setup(t, false)
		sess := r.mustStart(withMCP(cfg))
		assert.Equal(t, []domain.CapabilityLabel{domain.CapTokenCounts}, sess.Capabilities().Gaps(), "the http server was delivered")
		libraryTurn(t, r, sess, "note "+noteText, completed, []string{
			started,
			claudeGaps,
			"message_chunk*",
			"notification:Let me note that.",
			refused,
			"notification:" + domain.MsgToolServersGated,
			"tool_result:other:error",
			"message_chunk*",
			"notification:Noted.",
			"turn_completed",
		})
		for _, ev := range r.rec.All() {
			if strings.HasPrefix(ev.Message, domain.MsgCapabilityGapNotice) {
				assert.NotContains(t, ev.Message, string(domain.CapToolServers))
			}
		}
		raw, err := json.Marshal(sessionNewMCPServers(t, r))
		require.NoError(t, err)
		assert.JSONEq(t, `[{"type":"http","name":"interop","url":"`+hs.URL+`","headers":[{"name":"X-Interop","value":"claude"}]}]`, string(raw))
		check(t, srv, hs, nil)
		assert.NotContains(t, mcpMethods(readMCPLog(t, hs.Log)), "tools/call", "the refused call never reaches the server")
		last := lastMessage(t, srv.ModelCalls()[1])
		assert.Contains(t, last, `"tool_use_id":"toolu_mcp_1"`)
		assert.Contains(t, last, `User refused permission to run tool`)
		updates, permission := toolUpdates(t, r)
		assert.True(t, permission)
		assertToolLifecycle(t, updates, "failed")
	})
	t.Run("library allowed by the runtime's settings", func(t *testing.T) {
		r, srv, hs, cfg := setup(t, true)
		sess := r.mustStart(withMCP(cfg))
		libraryTurn(t, r, sess, "note "+noteText, completed, wantAllowed)
		check(t, srv, hs, []string{noteCall})
		last := lastMessage(t, srv.ModelCalls()[1])
		assert.Contains(t, last, `"tool_use_id":"toolu_mcp_1"`)
		assert.Contains(t, last, `noted: `+noteText, "the tool's answer reaches the model")
		updates, permission := toolUpdates(t, r)
		assert.False(t, permission, "the runtime's settings allow the tool")
		assertToolLifecycle(t, updates, "completed")
	})
	t.Run("cli", func(t *testing.T) {
		r, srv, hs, cfg := setup(t, true)
		wf := writeMCPWorkflow(t, filepath.Dir(cfg), r.command)
		run := cliCompleted(t, r, wantAllowed, "--workflow", wf, "note "+noteText)
		assert.Empty(t, run.Run.CapabilityGaps, "the prompt results' usage measures the turns: token counts is no gap")
		check(t, srv, hs, []string{noteCall})
	})
}

// TestMCPReferenceAgentWithholdsHTTP: the reference agent (`acpdrive
// agent`) advertises mcpCapabilities {http: false, sse: false}. Given an
// http server and a stdio server, acpdrive delivers the stdio server only,
// logs that it withheld one, and the session's notice names "tool
// servers" first among its gaps; the http server never hears from anyone.
// Covered through the library and through `acpdrive run --json --workflow`
// with agent-client-protocol.mcp_config.
func TestMCPReferenceAgentWithholdsHTTP(t *testing.T) {
	t.Parallel()
	want := textTurn(gapNotice(domain.CapToolServers, domain.CapTokenCounts, domain.CapSessionContinuation), "hello")
	const withheldLog = "withheld an MCP server whose transport the agent did not advertise"
	setup := func(t *testing.T) (r *rig, hs *httpMCPServer, cfg, agentLog string) {
		r = newRig(t)
		agentLog = filepath.Join(r.root, "agent.log")
		r.command = []string{testbin.Path(t), "agent", "--log", agentLog}
		hs = startHTTPMCPServer(t, r.root)
		cfg = filepath.Join(r.root, "cfg", "mcp.json")
		writeMCPConfig(t, cfg, map[string]mcpServerDecl{
			"local": {Command: mcpServerBin(t), Args: []string{"-transport", "stdio"}},
			"web":   {Type: "http", URL: hs.URL},
		})
		return r, hs, cfg, agentLog
	}
	// check: session/new carried the stdio server only; nobody contacted
	// the http server.
	check := func(t *testing.T, hs *httpMCPServer, agentLog string) {
		var servers json.RawMessage
		for _, rec := range readAgentLog(t, agentLog) {
			if rec.Method == "session/new" {
				var m struct {
					Params struct {
						MCPServers json.RawMessage `json:"mcpServers"`
					} `json:"params"`
				}
				require.NoError(t, json.Unmarshal(rec.Message, &m))
				servers = m.Params.MCPServers
			}
		}
		require.NotNil(t, servers, "the agent received no session/new")
		assert.JSONEq(t, `[{"name":"local","command":"`+mcpServerBin(t)+`","args":["-transport","stdio"],"env":[]}]`, string(servers))
		assert.Empty(t, readMCPLog(t, hs.Log), "the withheld http server is never contacted")
	}

	t.Run("library", func(t *testing.T) {
		r, hs, cfg, agentLog := setup(t)
		sess := r.mustStart(withMCP(cfg))
		assert.Equal(t, []domain.CapabilityLabel{domain.CapToolServers, domain.CapTokenCounts, domain.CapSessionContinuation},
			sess.Capabilities().Gaps())
		libraryTurn(t, r, sess, "hello", completed, want)
		check(t, hs, agentLog)
		assert.Contains(t, r.logs.String(), withheldLog)
	})
	t.Run("cli", func(t *testing.T) {
		r, hs, cfg, agentLog := setup(t)
		wf := writeMCPWorkflow(t, filepath.Dir(cfg), r.command)
		run := cliCompleted(t, r, want, "--workflow", wf, "hello")
		assertGaps(t, run, "tool servers", "token counts", "session continuation")
		assert.Contains(t, run.Stderr, withheldLog)
		assert.Contains(t, run.Stderr, "server=web transport=http")
		check(t, hs, agentLog)
	})
}

// TestMCPClaudeCurrentHTTPServer: today's Claude adapter (0.101.0) gets
// the same HTTP server on session/new and "tool servers" stays delivered;
// Claude Code connects to it (initialize, every HTTP request carrying the
// header). What it does before initialize (a server/discover call) and how
// it offers the tool to the model (deferred behind its ToolSearch tool)
// are its own. A tool call is not scripted: in its default mode, auto,
// the adapter has a classifier model call decide on consent, and the
// runtime's asking mode is set through a session mode, not here.
func TestMCPClaudeCurrentHTTPServer(t *testing.T) {
	t.Parallel()
	r, srv := claudeRigOf(t, "claude-current")
	hs := startHTTPMCPServer(t, r.root)
	cfg := filepath.Join(r.root, "cfg", "mcp.json")
	writeMCPConfig(t, cfg, map[string]mcpServerDecl{
		"interop": {Type: "http", URL: hs.URL, Headers: map[string]string{"X-Interop": "claude"}},
	})
	srv.Script(fakes.TextReply(fakes.Usage{Input: 100, Output: 4}, "Nothing to note."))
	sess := r.mustStart(withMCP(cfg))
	assert.Equal(t, []domain.CapabilityLabel{domain.CapTokenCounts}, sess.Capabilities().Gaps(), "the http server was delivered")
	require.Equal(t, completed, outcomeOf(r.turn(sess, "say nothing")))
	assert.Equal(t, "Nothing to note.", sess.LastMessage().Text)
	r.stop(sess)

	raw, err := json.Marshal(sessionNewMCPServers(t, r))
	require.NoError(t, err)
	assert.JSONEq(t, `[{"type":"http","name":"interop","url":"`+hs.URL+`","headers":[{"name":"X-Interop","value":"claude"}]}]`, string(raw))
	recs := readMCPLog(t, hs.Log)
	methods := mcpMethods(recs)
	assert.Contains(t, methods, "initialize", "Claude Code connected: %v", methods)
	assert.Contains(t, methods, "notifications/initialized", "%v", methods)
	var httpReqs int
	for _, rec := range recs {
		assert.Equal(t, "http", rec.Transport)
		switch {
		case rec.Kind == "http":
			httpReqs++
			assert.Equal(t, map[string]string{"X-Interop": "claude"}, rec.Headers, "the configured header reaches the server")
		case rec.Method == "initialize":
			assert.Equal(t, "claude-code/2.1.318", rec.Client)
		}
	}
	assert.Positive(t, httpReqs)
	assert.Empty(t, mcpCalls(recs), "no tool was called")
	t.Logf("MCP methods Claude Code sent: %v", methods)
}
