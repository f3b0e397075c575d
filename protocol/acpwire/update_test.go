package acpwire_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
)

func TestDecodeUpdate(t *testing.T) {
	cases := []struct {
		name  string
		raw   string
		kind  string
		known bool
		check func(t *testing.T, u acpwire.Update)
	}{
		{"agent text chunk", `{"sessionUpdate":"agent_message_chunk","messageId":"m1","content":{"type":"text","text":"Hello"}}`,
			acpwire.UpdateAgentMessageChunk, true, func(t *testing.T, u acpwire.Update) {
				require.NotNil(t, u.Chunk)
				assert.Equal(t, "m1", u.Chunk.MessageID)
				assert.Equal(t, "text", u.Chunk.Content.Type)
				assert.Equal(t, "Hello", u.Chunk.Content.Text)
			}},
		{"agent image chunk keeps its type", `{"sessionUpdate":"agent_message_chunk","content":{"type":"image","data":"AA==","mimeType":"image/png"}}`,
			acpwire.UpdateAgentMessageChunk, true, func(t *testing.T, u acpwire.Update) {
				assert.Equal(t, "image", u.Chunk.Content.Type)
			}},
		{"user chunk", `{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"q"}}`, acpwire.UpdateUserMessageChunk, true, nil},
		{"thought chunk", `{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm"}}`, acpwire.UpdateAgentThoughtChunk, true, nil},
		{"tool call", `{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Read","kind":"read","status":"pending"}`,
			acpwire.UpdateToolCall, true, func(t *testing.T, u acpwire.Update) {
				require.NotNil(t, u.ToolCall)
				assert.Equal(t, "c1", u.ToolCall.ToolCallID)
				assert.Equal(t, "read", *u.ToolCall.Kind)
				assert.Equal(t, "Read", *u.ToolCall.Title)
			}},
		{"tool call update with nulls", `{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed","title":null,"kind":null}`,
			acpwire.UpdateToolCallUpdate, true, func(t *testing.T, u acpwire.Update) {
				assert.Nil(t, u.ToolCall.Title)
				assert.Nil(t, u.ToolCall.Kind)
				assert.Equal(t, "completed", *u.ToolCall.Status)
			}},
		{"plan", `{"sessionUpdate":"plan","entries":[{"content":"x","priority":"high","status":"pending"}]}`,
			acpwire.UpdatePlan, true, func(t *testing.T, u acpwire.Update) { assert.Len(t, u.Plan.Entries, 1) }},
		{"available commands", `{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"web","description":"Search the web","input":{"hint":"q"}}]}`,
			acpwire.UpdateAvailableCommandsUpdate, true, func(t *testing.T, u acpwire.Update) {
				assert.Equal(t, []acpwire.AvailableCommand{{Name: "web", Description: "Search the web"}}, u.Commands.AvailableCommands)
			}},
		{"current mode", `{"sessionUpdate":"current_mode_update","currentModeId":"code"}`, acpwire.UpdateCurrentModeUpdate, true,
			func(t *testing.T, u acpwire.Update) { assert.Equal(t, "code", u.Mode.CurrentModeID) }},
		{"config options", `{"sessionUpdate":"config_option_update","configOptions":[{"id":"model","name":"Model","type":"select","currentValue":"m1","options":[{"value":"m1","name":"M1"},{"group":"g","name":"G","options":[{"value":"m2","name":"M2"}]}]},{"id":"fast","name":"Fast","type":"boolean","currentValue":false}]}`,
			acpwire.UpdateConfigOptionUpdate, true, func(t *testing.T, u acpwire.Update) {
				require.Len(t, u.Config.ConfigOptions, 2)
				assert.Equal(t, "m1", u.Config.ConfigOptions[0].Value())
				assert.Equal(t, []string{"m1", "m2"}, u.Config.ConfigOptions[0].Values())
				assert.Equal(t, "false", u.Config.ConfigOptions[1].Value())
				assert.Nil(t, u.Config.ConfigOptions[1].Values())
			}},
		{"session info", `{"sessionUpdate":"session_info_update","title":"t"}`, acpwire.UpdateSessionInfoUpdate, true,
			func(t *testing.T, u acpwire.Update) { assert.Equal(t, "t", *u.Info.Title) }},
		{"usage", `{"sessionUpdate":"usage_update","used":53000,"size":200000,"cost":{"amount":0.045,"currency":"USD"}}`, acpwire.UpdateUsageUpdate, true,
			func(t *testing.T, u acpwire.Update) {
				assert.Equal(t, uint64(53000), u.Usage.Used)
				assert.Equal(t, &domain.Cost{Amount: 0.045, Currency: "USD"}, u.Usage.Cost)
			}},
		{"unstable notice", `{"sessionUpdate":"notice","severity":"warning","title":"MCP down"}`, acpwire.UpdateNotice, true,
			func(t *testing.T, u acpwire.Update) {
				assert.Equal(t, &acpwire.Notice{Severity: "warning", Title: "MCP down"}, u.Notice)
				assert.Nil(t, u.Chunk)
			}},
		{"informational chunk", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"warn"},"_meta":{"claudeCode":{"kind":"informational"}}}`,
			acpwire.UpdateAgentMessageChunk, true, func(t *testing.T, u acpwire.Update) { assert.True(t, u.Chunk.Informational()) }},
		{"other chunk meta", `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"},"_meta":{"claudeCode":{"kind":"reply"}}}`,
			acpwire.UpdateAgentMessageChunk, true, func(t *testing.T, u acpwire.Update) { assert.False(t, u.Chunk.Informational()) }},
		{"v2 state_update is not a turn end", `{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}`, "state_update", false, nil},
		{"vendor kind", `{"sessionUpdate":"_vendor/x"}`, "_vendor/x", false, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u, err := acpwire.DecodeUpdate(json.RawMessage(c.raw))
			require.NoError(t, err)
			assert.Equal(t, c.kind, u.Kind)
			assert.Equal(t, c.known, u.Known)
			if c.check != nil {
				c.check(t, u)
			}
		})
	}
}

func TestDecodeUpdateErrors(t *testing.T) {
	for _, raw := range []string{
		`{}`,
		`{"sessionUpdate":7}`,
		`[]`,
		`not json`,
		`{"sessionUpdate":"agent_message_chunk","content":"text"}`,
		`{"sessionUpdate":"tool_call_update","status":"completed"}`,
		`{"sessionUpdate":"agent_message_chunk","messageId":3,"content":{"type":"text","text":"x"}}`,
		`{"sessionUpdate":"current_mode_update","currentModeId":3}`,
		`{"sessionUpdate":"usage_update","used":"many","size":1}`,
	} {
		_, err := acpwire.DecodeUpdate(json.RawMessage(raw))
		assert.Error(t, err, raw)
	}
}

func TestRefusingOption(t *testing.T) {
	opt := func(id, kind string) acpwire.PermissionOption {
		return acpwire.PermissionOption{OptionID: id, Kind: kind}
	}
	cases := []struct {
		name string
		opts []acpwire.PermissionOption
		want string
		ok   bool
	}{
		{"reject once preferred", []acpwire.PermissionOption{opt("a", "allow_once"), opt("ra", "reject_always"), opt("ro", "reject_once")}, "ro", true},
		{"reject always when no once", []acpwire.PermissionOption{opt("a", "allow_always"), opt("ra", "reject_always")}, "ra", true},
		{"first of several", []acpwire.PermissionOption{opt("r1", "reject_once"), opt("r2", "reject_once")}, "r1", true},
		{"allow only", []acpwire.PermissionOption{opt("a", "allow_once"), opt("b", "allow_always")}, "", false},
		{"none", nil, "", false},
		{"unknown kinds", []acpwire.PermissionOption{opt("x", "deny")}, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := acpwire.RefusingOption(c.opts)
			assert.Equal(t, c.ok, ok)
			assert.Equal(t, c.want, got.OptionID)
		})
	}
}

func TestWireShapes(t *testing.T) {
	b, err := json.Marshal(acpwire.InitializeRequest{ProtocolVersion: 1})
	require.NoError(t, err)
	assert.JSONEq(t, `{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false}}`, string(b))
	b, err = json.Marshal(acpwire.NewSessionRequest{CWD: "/w", MCPServers: []json.RawMessage{}})
	require.NoError(t, err)
	assert.JSONEq(t, `{"cwd":"/w","mcpServers":[]}`, string(b))
	b, err = json.Marshal(acpwire.SelectedAnswer("ro"))
	require.NoError(t, err)
	assert.JSONEq(t, `{"outcome":{"outcome":"selected","optionId":"ro"}}`, string(b))
	b, err = json.Marshal(acpwire.CancelledAnswer())
	require.NoError(t, err)
	assert.JSONEq(t, `{"outcome":{"outcome":"cancelled"}}`, string(b))

	var resp acpwire.InitializeResponse
	require.NoError(t, json.Unmarshal([]byte(`{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"sessionCapabilities":{"close":{},"resume":null}}}`), &resp))
	sc := resp.AgentCapabilities.SessionCapabilities
	assert.True(t, sc.CanClose())
	assert.False(t, sc.CanResume(), "a null marker is not support")
	assert.False(t, sc.CanDelete())
	var none *acpwire.SessionCapabilities
	assert.False(t, none.CanClose())
}

func FuzzDecodeUpdate(f *testing.F) {
	f.Add(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}`)
	f.Add(`{"sessionUpdate":"tool_call_update","toolCallId":"a","status":"failed"}`)
	f.Add(`{"sessionUpdate":"notice"}`)
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := acpwire.DecodeUpdate(json.RawMessage(raw))
		if err == nil && u.Kind == "" && u.Known {
			t.Fatalf("known update without a kind: %q", raw)
		}
	})
}

func TestDecodeSessionUpdate(t *testing.T) {
	cases := []struct {
		name    string
		params  string
		session string
		kind    string
		known   bool
		text    string
		wantErr bool
	}{
		{"chunk fast path", `{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"hi"}}}`, "s", "agent_message_chunk", true, "hi", false},
		{"thought fast path", `{"sessionId":"s","update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hm"}}}`, "s", "agent_thought_chunk", true, "hm", false},
		{"tool update with content array falls back", `{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c","status":"completed","content":[{"type":"content","content":{"type":"text","text":"x"}}]}}`, "s", "tool_call_update", true, "", false},
		{"unknown variant with content is not a chunk", `{"sessionId":"s","update":{"sessionUpdate":"compaction_summary_chunk","content":{"type":"text","text":"x"}}}`, "s", "compaction_summary_chunk", false, "", false},
		{"chunk with a non-string messageId", `{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":7,"content":{"type":"text","text":"x"}}}`, "s", "", false, "", true},
		{"no update", `{"sessionId":"s"}`, "s", "", false, "", true},
		{"not an object", `[1,2]`, "", "", false, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sid, u, err := acpwire.DecodeSessionUpdate(json.RawMessage(c.params))
			if c.wantErr {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.session, sid)
			assert.Equal(t, c.kind, u.Kind)
			assert.Equal(t, c.known, u.Known)
			if c.text != "" {
				assert.Equal(t, c.text, u.Chunk.Content.Text)
			}
		})
	}
}

func BenchmarkDecodeSessionUpdate(b *testing.B) {
	params := json.RawMessage(`{"sessionId":"sess_abc","update":{"sessionUpdate":"agent_message_chunk","messageId":"msg_agent_c42b9","content":{"type":"text","text":"Hello, this is a chunk of a streamed reply."}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := acpwire.DecodeSessionUpdate(params); err != nil {
			b.Fatal(err)
		}
	}
}

func TestDecodeSessionUpdateInformational(t *testing.T) {
	cases := []struct {
		name, params string
		want         bool
	}{
		{"meta on the update", `{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"w"},"_meta":{"claudeCode":{"kind":"informational"}}}}`, true},
		{"meta on the content", `{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"w","_meta":{"claudeCode":{"kind":"informational"}}}}}`, true},
		{"plain chunk", `{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"w"}}}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, u, err := acpwire.DecodeSessionUpdate(json.RawMessage(c.params))
			require.NoError(t, err)
			require.NotNil(t, u.Chunk)
			assert.Equal(t, c.want, u.Chunk.Informational())
		})
	}
}
