package dialect

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpclient"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
)

func TestDecodeStateUpdateV2(t *testing.T) {
	sid, u, err := v2{}.DecodeUpdate(json.RawMessage(`{"sessionId":"s1","update":{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn","usage":{"inputTokens":120,"outputTokens":7,"cachedReadTokens":30,"totalTokens":157}}}`))
	require.NoError(t, err)
	assert.Equal(t, "s1", sid)
	require.Equal(t, KindState, u.Kind)
	st := u.State
	assert.Equal(t, StateIdleV2, st.Name)
	assert.True(t, st.Idle)
	assert.False(t, st.Busy)
	assert.Equal(t, "end_turn", st.End.StopReason)
	assert.Equal(t, domain.SourceStateUpdate, st.End.Source)
	require.NotNil(t, st.End.Usage)
	assert.Equal(t, int64(157), *st.End.Usage.TotalTokens)
	assert.Equal(t, int64(30), *st.End.Usage.CachedReadTokens)
	assert.Nil(t, st.End.Usage.ThoughtTokens)

	_, u, err = v2{}.DecodeUpdate(json.RawMessage(`{"sessionId":"s1","update":{"sessionUpdate":"state_update","state":"requires_action"}}`))
	require.NoError(t, err)
	assert.True(t, u.State.Busy)

	_, u, err = v2{}.DecodeUpdate(json.RawMessage(`{"sessionId":"s1","update":{"sessionUpdate":"state_update","state":"idle","stopReason":"error","error":{"code":-32603,"message":"boom","data":{"x":1}}}}`))
	require.NoError(t, err)
	require.NotNil(t, u.State.End.Error)
	assert.Equal(t, int64(-32603), u.State.End.Error.Code)
	assert.JSONEq(t, `{"x":1}`, string(u.State.End.Error.Data))

	_, u, err = v2{}.DecodeUpdate(json.RawMessage(`{"sessionId":"s1","update":{"sessionUpdate":"state_update"}}`))
	require.NoError(t, err)
	assert.Equal(t, KindState, u.Kind)
	assert.Equal(t, msgStateMalformedV2, u.State.Malformed)

	_, u, err = v1{}.DecodeUpdate(json.RawMessage(`{"sessionId":"s1","update":{"sessionUpdate":"state_update","state":"idle"}}`))
	require.NoError(t, err)
	assert.Equal(t, KindUnknown, u.Kind, "v1 has no state_update")
}

// TestReshapedKindsV2: the kinds v2 reshaped decode straight into the
// neutral model, as v1's counterparts do.
func TestReshapedKindsV2(t *testing.T) {
	cases := []struct {
		name, params string
		kind         Kind
		text, msgID  string
		plan         []domain.PlanEntry
	}{
		{"agent_message", `{"sessionId":"s","update":{"sessionUpdate":"agent_message","messageId":"m1","content":[{"type":"text","text":"a"},{"type":"image"},{"type":"text","text":"b"}]}}`,
			KindAgentText, "ab", "m1", nil},
		{"user_message", `{"sessionId":"s","update":{"sessionUpdate":"user_message","messageId":"u1","content":[{"type":"text","text":"hi"}]}}`,
			KindUserText, "hi", "u1", nil},
		{"user_message without text", `{"sessionId":"s","update":{"sessionUpdate":"user_message","messageId":"u1"}}`,
			KindUserText, "", "u1", nil},
		{"agent_thought", `{"sessionId":"s","update":{"sessionUpdate":"agent_thought","content":[{"type":"text","text":"hm"}]}}`,
			KindThought, "hm", "", nil},
		{"agent_message without text", `{"sessionId":"s","update":{"sessionUpdate":"agent_message","messageId":"m1"}}`, KindAlive, "", "", nil},
		{"plan_update", `{"sessionId":"s","update":{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p","entries":[{"content":"x","priority":"high","status":"pending"}]}}}`,
			KindPlan, "", "", []domain.PlanEntry{{Content: "x", Priority: "high", Status: "pending"}}},
		{"plan_update without entries", `{"sessionId":"s","update":{"sessionUpdate":"plan_update","plan":{"type":"markdown"}}}`, KindAlive, "", "", nil},
		{"plan_removed", `{"sessionId":"s","update":{"sessionUpdate":"plan_removed","planId":"p"}}`, KindAlive, "", "", nil},
		{"terminal_update", `{"sessionId":"s","update":{"sessionUpdate":"terminal_update","terminalId":"t1","command":"echo hi"}}`, KindAlive, "", "", nil},
		{"terminal_output_chunk", `{"sessionId":"s","update":{"sessionUpdate":"terminal_output_chunk","terminalId":"t1","data":"hi\n"}}`, KindAlive, "", "", nil},
		{"tool_call_content_chunk", `{"sessionId":"s","update":{"sessionUpdate":"tool_call_content_chunk","toolCallId":"c1"}}`, KindAlive, "", "", nil},
		{"a kind v1 has", `{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":"m2","content":{"type":"text","text":"c"}}}`,
			KindAgentText, "c", "m2", nil},
		{"a kind v1 has, after a _meta naming one of v2's", `{"sessionId":"s","update":{"_meta":{"sessionUpdate":"agent_message"},"sessionUpdate":"agent_message_chunk","messageId":"m3","content":{"type":"text","text":"d"}}}`,
			KindAgentText, "d", "m3", nil},
		{"one of v2's, after a _meta naming another", `{"sessionId":"s","update":{"_meta":{"sessionUpdate":"plan_removed"},"sessionUpdate":"agent_message","messageId":"m4","content":[{"type":"text","text":"e"}]}}`,
			KindAgentText, "e", "m4", nil},
		{"spaced", "{ \"update\" : { \"content\" : [ { \"type\" : \"text\" , \"text\" : \"f\" } ] , \"sessionUpdate\" :\n \"agent_message\" } , \"sessionId\" : \"s\" }",
			KindAgentText, "f", "", nil},
		{"a kind neither has", `{"sessionId":"s","update":{"sessionUpdate":"hologram"}}`, KindUnknown, "", "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sid, u, err := v2{}.DecodeUpdate(json.RawMessage(c.params))
			require.NoError(t, err)
			assert.Equal(t, "s", sid)
			require.Equal(t, c.kind, u.Kind)
			switch c.kind {
			case KindAgentText, KindUserText, KindThought:
				assert.Nil(t, u.Wire.Chunk)
				assert.Equal(t, acpwire.ContentBlock{Type: "text", Text: c.text}, u.Chunk.Content)
				assert.Equal(t, c.msgID, u.Chunk.MessageID)
			case KindPlan:
				require.NotNil(t, u.Wire.Plan)
				assert.Equal(t, c.plan, u.Wire.Plan.Entries)
			}
		})
	}
	_, _, err := v2{}.DecodeUpdate(json.RawMessage(`{"sessionId":"s","update":{"sessionUpdate":"plan_update","plan":{"entries":7}}}`))
	assert.Error(t, err, "entries that are no list are malformed")
	_, _, err = v2{}.DecodeUpdate(json.RawMessage(`{"sessionId":"s","update":{"sessionUpdate":"agent_message","content":"x"}}`))
	assert.Error(t, err, "content that is no list is malformed")
}

func TestHandshakeV2(t *testing.T) {
	h, err := v2{}.Handshake(json.RawMessage(`{"protocolVersion":2,"info":{"name":"a","title":"A","version":"1"},
		"capabilities":{"session":{"prompt":{"image":{},"embeddedContext":{}},"mcp":{"stdio":{},"http":{}},"delete":{},"fork":{}},"providers":{}},
		"authMethods":[{"methodId":"login","name":"Log in","type":"agent"}]}`))
	require.NoError(t, err)
	assert.Equal(t, 2, h.ProtocolVersion)
	assert.Equal(t, "a", h.AgentInfo.Name)
	ac := h.AgentCapabilities
	assert.False(t, ac.LoadSession)
	assert.True(t, ac.PromptCapabilities.Image && ac.PromptCapabilities.EmbeddedContext && !ac.PromptCapabilities.Audio)
	assert.True(t, ac.MCPCapabilities.HTTP)
	assert.False(t, ac.MCPCapabilities.SSE)
	sc := ac.SessionCapabilities
	assert.True(t, sc.CanResume() && sc.CanClose() && sc.CanList() && sc.CanDelete())
	assert.Equal(t, []string{"list", "delete", "resume", "close", "fork"}, sc.Advertised())
	require.Len(t, h.AuthMethods, 1)
	assert.Equal(t, "login", h.AuthMethods[0].ID)

	bare, err := v2{}.Handshake(json.RawMessage(`{"protocolVersion":2,"info":{"name":"b","version":"1"},"capabilities":{}}`))
	require.NoError(t, err)
	assert.Nil(t, bare.AgentCapabilities.SessionCapabilities, "no session capability: nothing advertised")

	_, err = v2{}.Handshake(json.RawMessage(`{"protocolVersion":2,"capabilities":{}}`))
	assertMessage(t, err, "a v2 initialize answer needs info")
	_, err = v2{}.Handshake(json.RawMessage(`{"protocolVersion":2,"info":7}`))
	var de *acpclient.DecodeError
	assert.ErrorAs(t, err, &de)
}

func TestEncodeServersV2(t *testing.T) {
	out := v2{}.EncodeServers([]domain.MCPServer{
		{Name: "tools", Transport: domain.MCPStdio, Command: "/bin/tools"},
		{Name: "web", Transport: domain.MCPHTTP, URL: "http://127.0.0.1:9/mcp"},
	})
	require.Len(t, out, 2)
	assert.JSONEq(t, `{"type":"stdio","name":"tools","command":"/bin/tools","args":[],"env":[]}`, string(out[0]))
	assert.Contains(t, string(out[1]), `"type":"http"`)
}

func TestAnswerV2(t *testing.T) {
	end, err := v2{}.Answer(json.RawMessage(`{"messageId":"user-1"}`))
	require.NoError(t, err)
	assert.Nil(t, end, "v2's answer accepts the prompt: the turn ends with a state")
	_, err = v2{}.Answer(json.RawMessage(`[]`))
	var de *acpclient.DecodeError
	assert.ErrorAs(t, err, &de)
	assert.Equal(t, EndsWithState, v2{}.Ends())
}

// BenchmarkDecodeReshapedV2 decodes one v2 agent_message, the kind v2
// reshaped, into the neutral model.
func BenchmarkDecodeReshapedV2(b *testing.B) {
	params := json.RawMessage(`{"sessionId":"s-1","update":{"sessionUpdate":"agent_message","messageId":"m-1","content":[{"type":"text","text":"hello world "}]}}`)
	b.ReportAllocs()
	for range b.N {
		if _, _, err := (v2{}).DecodeUpdate(params); err != nil {
			b.Fatal(err)
		}
	}
}

func TestSettleV2(t *testing.T) {
	h := settles(t, v2{}, `{"protocolVersion":2,"info":{"name":"a","version":"1"},"capabilities":{}}`)
	assert.Equal(t, "a", h.AgentInfo.Name)
	n, err := Open("2")
	require.NoError(t, err)
	_, _, err = n.Settle(json.RawMessage(`{"protocolVersion":1}`))
	assertMessage(t, err, "agent answered protocol version 1; --protocol 2 accepts only 2")
}

// TestParamsAskingV2AcceptingV1DeclareV1Beside: asking for 2 and
// accepting 1 (auto, while v2 is the newest), a runtime that answers 1
// reads v1's clientInfo and clientCapabilities beside v2's fields.
func TestParamsAskingV2AcceptingV1DeclareV1Beside(t *testing.T) {
	n := Negotiation{choice: domain.ProtocolAuto, Ask: v2{}, accept: []Dialect{v1{}, v2{}}}
	b, err := json.Marshal(n.Params(Client{Name: "acpdrive", Version: "t"}))
	require.NoError(t, err)
	assert.JSONEq(t, `{"protocolVersion":2,"info":{"name":"acpdrive","version":"t"},"capabilities":{},
		"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false,"session":{"notices":{}}},
		"clientInfo":{"name":"acpdrive","version":"t"}}`, string(b))
}

// translatedV2 is the translation v2 updates went through before this
// dialect decoded them straight into the model: rebuilt as v1's JSON and
// decoded again. It is kept here as the reference the direct decoding
// must agree with (FuzzReshapedAsTranslated).
func translatedV2(kind string, params json.RawMessage) (out json.RawMessage, ok bool) {
	switch kind {
	case UpdateUserMessageV2, UpdateAgentMessageV2, UpdateAgentThoughtV2:
		var n struct {
			SessionID string `json:"sessionId"`
			Update    struct {
				MessageID string                 `json:"messageId"`
				Content   []acpwire.ContentBlock `json:"content"`
			} `json:"update"`
		}
		if json.Unmarshal(params, &n) != nil {
			return params, false
		}
		text, has := "", false
		for _, b := range n.Update.Content {
			if b.Type == "text" {
				text, has = text+b.Text, true
			}
		}
		if !has && kind != UpdateUserMessageV2 {
			return nil, true
		}
		b, _ := json.Marshal(map[string]any{"sessionId": n.SessionID, "update": map[string]any{
			"sessionUpdate": kind + "_chunk", "messageId": n.Update.MessageID,
			"content": acpwire.ContentBlock{Type: "text", Text: text}}})
		return b, true
	case UpdatePlanUpdateV2:
		var n struct {
			SessionID string `json:"sessionId"`
			Update    struct {
				Plan struct {
					Entries json.RawMessage `json:"entries"`
				} `json:"plan"`
			} `json:"update"`
		}
		if json.Unmarshal(params, &n) != nil || len(n.Update.Plan.Entries) == 0 {
			return nil, true
		}
		b, _ := json.Marshal(map[string]any{"sessionId": n.SessionID, "update": map[string]any{
			"sessionUpdate": acpwire.UpdatePlan, "entries": n.Update.Plan.Entries}})
		return b, true
	case UpdatePlanRemovedV2, UpdateTerminalUpdateV2, UpdateTerminalOutputChunkV2, UpdateToolCallContentChunkV2:
		return nil, true
	}
	return params, false
}

// FuzzReshapedAsTranslated: a kind v2 reshaped decodes to what its
// translation into v1's JSON decoded to: the same kind (no update for an
// update that only says the runtime is alive), the same text and message
// id, the same plan; malformed where the translation was.
func FuzzReshapedAsTranslated(f *testing.F) {
	for _, seed := range []string{
		`{"sessionId":"s","update":{"sessionUpdate":"agent_message","messageId":"m1","content":[{"type":"text","text":"a"},{"type":"image"},{"type":"text","text":"b"}]}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"user_message","messageId":"u1","content":[{"type":"text","text":"hi"}]}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"user_message"}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"agent_thought","content":[{"type":"text","text":"\u00e9\n"}]}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"agent_message","content":[]}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"agent_message","content":"x"}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"plan_update","plan":{"entries":[{"content":"x","priority":"high","status":"pending"}]}}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"plan_update","plan":{"entries":null}}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"plan_update","plan":{"entries":7}}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"plan_removed"}}`,
		`{"sessionId":"s","update":{"sessionUpdate":"terminal_output_chunk","data":"x"}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		_, common, cerr := decodeCommon(params)
		if cerr != nil || common.Kind != KindUnknown {
			return // not one of v2's own kinds
		}
		kind := common.Wire.Kind
		out, ok := translatedV2(kind, params)
		if !ok {
			return
		}
		sid, u, err := v2{}.DecodeUpdate(params)
		if out == nil {
			if err != nil || u.Kind != KindAlive {
				t.Fatalf("%s: got kind %d, error %v; the translation said alive", params, u.Kind, err)
			}
			return
		}
		tsid, tu, terr := decodeCommon(out)
		if (err != nil) != (terr != nil) {
			t.Fatalf("%s: error %v; the translation's %v", params, err, terr)
		}
		if err != nil {
			return
		}
		if sid != tsid || u.Kind != tu.Kind {
			t.Fatalf("%s: %q kind %d; the translation's %q kind %d", params, sid, u.Kind, tsid, tu.Kind)
		}
		assert.Equal(t, tu.Chunk, u.Chunk)
		assert.Equal(t, tu.Wire.Plan, u.Wire.Plan)
	})
}
