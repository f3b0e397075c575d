package acpwire_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
)

func TestDecodeStateUpdate(t *testing.T) {
	sid, su, ok, err := acpwire.DecodeStateUpdate(json.RawMessage(`{"sessionId":"s1","update":{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn","usage":{"inputTokens":120,"outputTokens":7,"cachedReadTokens":30,"totalTokens":157}}}`))
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "s1", sid)
	assert.Equal(t, acpwire.StateIdle, su.State)
	assert.Equal(t, "end_turn", su.StopReason)
	require.NotNil(t, su.Usage)
	assert.Equal(t, uint64(157), su.Usage.TotalTokens)
	assert.Equal(t, uint64(30), *su.Usage.CachedReadTokens)

	_, _, ok, err = acpwire.DecodeStateUpdate(json.RawMessage(`{"sessionId":"s1","update":{"sessionUpdate":"state_update"}}`))
	assert.True(t, ok)
	assert.ErrorIs(t, err, acpwire.ErrNoState)

	_, _, ok, err = acpwire.DecodeStateUpdate(json.RawMessage(`{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk"}}`))
	assert.False(t, ok)
	assert.NoError(t, err)
}

func TestTranslateV2Update(t *testing.T) {
	cases := []struct {
		kind, params, want string
	}{
		{acpwire.UpdateAgentMessage, `{"sessionId":"s","update":{"sessionUpdate":"agent_message","messageId":"m1","content":[{"type":"text","text":"a"},{"type":"image"},{"type":"text","text":"b"}]}}`,
			`{"sessionId":"s","update":{"content":{"type":"text","text":"ab"},"messageId":"m1","sessionUpdate":"agent_message_chunk"}}`},
		{acpwire.UpdateUserMessage, `{"sessionId":"s","update":{"sessionUpdate":"user_message","messageId":"u1","content":[{"type":"text","text":"hi"}]}}`,
			`{"sessionId":"s","update":{"content":{"type":"text","text":"hi"},"messageId":"u1","sessionUpdate":"user_message_chunk"}}`},
		{acpwire.UpdateAgentMessage, `{"sessionId":"s","update":{"sessionUpdate":"agent_message","messageId":"m1"}}`, ``},
		{acpwire.UpdatePlanUpdate, `{"sessionId":"s","update":{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p","entries":[{"content":"x","priority":"high","status":"pending"}]}}}`,
			`{"sessionId":"s","update":{"entries":[{"content":"x","priority":"high","status":"pending"}],"sessionUpdate":"plan"}}`},
		{acpwire.UpdatePlanRemoved, `{"sessionId":"s","update":{"sessionUpdate":"plan_removed","planId":"p"}}`, ``},
		{acpwire.UpdateTerminalUpdate, `{"sessionId":"s","update":{"sessionUpdate":"terminal_update","terminalId":"t1","command":"echo hi"}}`, ``},
		{acpwire.UpdateTerminalOutputChunk, `{"sessionId":"s","update":{"sessionUpdate":"terminal_output_chunk","terminalId":"t1","data":"hi\n"}}`, ``},
		{acpwire.UpdateToolCallContentChunk, `{"sessionId":"s","update":{"sessionUpdate":"tool_call_content_chunk","toolCallId":"c1"}}`, ``},
	}
	for _, c := range cases {
		out, ok := acpwire.TranslateV2Update(c.kind, json.RawMessage(c.params))
		require.True(t, ok, c.params)
		if c.want == "" {
			assert.Nil(t, out, c.params)
			continue
		}
		assert.JSONEq(t, c.want, string(out))
	}
	in := json.RawMessage(`{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk"}}`)
	out, ok := acpwire.TranslateV2Update(acpwire.UpdateAgentMessageChunk, in)
	assert.False(t, ok)
	assert.Equal(t, in, out)
}

func TestInitializeResponseV2AsV1(t *testing.T) {
	var r acpwire.InitializeResponseV2
	require.NoError(t, json.Unmarshal([]byte(`{"protocolVersion":2,"info":{"name":"a","title":"A","version":"1"},
		"capabilities":{"session":{"prompt":{"image":{},"embeddedContext":{}},"mcp":{"stdio":{},"http":{}},"delete":{},"fork":{}},"providers":{}},
		"authMethods":[{"methodId":"login","name":"Log in","type":"agent"}]}`), &r))
	v1 := r.AsV1()
	assert.Equal(t, 2, v1.ProtocolVersion)
	assert.Equal(t, "a", v1.AgentInfo.Name)
	ac := v1.AgentCapabilities
	assert.False(t, ac.LoadSession)
	assert.True(t, ac.PromptCapabilities.Image && ac.PromptCapabilities.EmbeddedContext && !ac.PromptCapabilities.Audio)
	assert.True(t, ac.MCPCapabilities.HTTP)
	assert.False(t, ac.MCPCapabilities.SSE)
	sc := ac.SessionCapabilities
	assert.True(t, sc.CanResume() && sc.CanClose() && sc.CanList() && sc.CanDelete())
	assert.Equal(t, []string{"list", "delete", "resume", "close", "fork"}, sc.Advertised())
	require.Len(t, v1.AuthMethods, 1)
	assert.Equal(t, "login", v1.AuthMethods[0].ID)

	var bare acpwire.InitializeResponseV2
	require.NoError(t, json.Unmarshal([]byte(`{"protocolVersion":2,"info":{"name":"b","version":"1"},"capabilities":{}}`), &bare))
	assert.Nil(t, bare.AsV1().AgentCapabilities.SessionCapabilities, "no session capability: nothing advertised")
}

func TestEncodeMCPServersV2(t *testing.T) {
	out := acpwire.EncodeMCPServersV2([]domain.MCPServer{
		{Name: "tools", Transport: domain.MCPStdio, Command: "/bin/tools"},
		{Name: "web", Transport: domain.MCPHTTP, URL: "http://127.0.0.1:9/mcp"},
	})
	require.Len(t, out, 2)
	assert.JSONEq(t, `{"type":"stdio","name":"tools","command":"/bin/tools","args":[],"env":[]}`, string(out[0]))
	assert.Contains(t, string(out[1]), `"type":"http"`)
}
