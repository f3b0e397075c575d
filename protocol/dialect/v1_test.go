package dialect

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpclient"
)

func TestDecodeUpdateV1(t *testing.T) {
	cases := map[string]Kind{
		`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a"}}`: KindAgentText,
		`{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"a"}}`:  KindUserText,
		`{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"a"}}`: KindThought,
		`{"sessionUpdate":"tool_call","toolCallId":"c"}`:                               KindToolCall,
		`{"sessionUpdate":"tool_call_update","toolCallId":"c"}`:                        KindToolUpdate,
		`{"sessionUpdate":"plan","entries":[]}`:                                        KindPlan,
		`{"sessionUpdate":"available_commands_update","availableCommands":[]}`:         KindCommands,
		`{"sessionUpdate":"current_mode_update","currentModeId":"x"}`:                  KindMode,
		`{"sessionUpdate":"config_option_update","configOptions":[]}`:                  KindConfig,
		`{"sessionUpdate":"session_info_update"}`:                                      KindInfo,
		`{"sessionUpdate":"usage_update","used":1,"size":2}`:                           KindUsage,
		`{"sessionUpdate":"notice","severity":"info","title":"t"}`:                     KindNotice,
		`{"sessionUpdate":"subagent_update","sessionId":"c1"}`:                         KindSubagent,
		`{"sessionUpdate":"session_message"}`:                                          KindSessionMessage,
		`{"sessionUpdate":"agent_message","content":[{"type":"text","text":"a"}]}`:     KindUnknown,
		`{"sessionUpdate":"plan_removed"}`:                                             KindUnknown,
	}
	for update, want := range cases {
		sid, u, err := v1{}.DecodeUpdate(json.RawMessage(`{"sessionId":"s","update":` + update + `}`))
		require.NoError(t, err, update)
		assert.Equal(t, "s", sid)
		assert.Equal(t, want, u.Kind, update)
	}
	_, _, err := v1{}.DecodeUpdate(json.RawMessage(`{"sessionId":"s","update":{"sessionUpdate":"tool_call"}}`))
	assert.Error(t, err, "a known kind whose payload does not match is an error")
}

func TestAnswerV1(t *testing.T) {
	end, err := v1{}.Answer(json.RawMessage(`{"stopReason":"end_turn","usage":{"inputTokens":3,"outputTokens":4,"totalTokens":7},"_meta":{"k":1}}`))
	require.NoError(t, err)
	require.NotNil(t, end)
	assert.Equal(t, "end_turn", end.StopReason)
	assert.Equal(t, domain.SourcePromptResult, end.Source)
	require.NotNil(t, end.Usage)
	assert.Equal(t, int64(7), *end.Usage.TotalTokens)
	assert.JSONEq(t, `{"k":1}`, string(end.Meta))

	end, err = v1{}.Answer(json.RawMessage(`{"stopReason":"end_turn","usage":"lots"}`))
	require.NoError(t, err)
	assert.Nil(t, end.Usage)
	assert.Error(t, end.UsageErr, "a usage that does not decode costs the turn its figure only")

	end, err = v1{}.Answer(json.RawMessage(`{"stopReason":"end_turn","usage":null}`))
	require.NoError(t, err)
	assert.Nil(t, end.Usage)
	assert.NoError(t, end.UsageErr)

	_, err = v1{}.Answer(json.RawMessage(`[]`))
	var de *acpclient.DecodeError
	assert.ErrorAs(t, err, &de)
	assert.Equal(t, EndsWithAnswer, v1{}.Ends())
}

func TestContinuationV1(t *testing.T) {
	hold, replay := v1{}.Continuation("session/load")
	assert.True(t, hold && replay)
	hold, replay = v1{}.Continuation("session/resume")
	assert.False(t, hold || replay)
}

func TestSettleV1(t *testing.T) {
	h := settles(t, v1{}, `{"protocolVersion":1,"agentInfo":{"name":"a","version":"1"},"agentCapabilities":{"loadSession":true}}`)
	assert.Equal(t, "a", h.AgentInfo.Name)
	assert.True(t, h.AgentCapabilities.LoadSession)
	n, err := Open("1")
	require.NoError(t, err)
	_, _, err = n.Settle(json.RawMessage(`{"protocolVersion":2,"info":{"name":"a"}}`))
	assertMessage(t, err, "agent reported protocol version 2, want 1")
}

func TestParamsV1(t *testing.T) {
	c := Client{Name: "acpdrive", Version: "t", Subagents: true}
	one, err := Open("1")
	require.NoError(t, err)
	b, err := json.Marshal(one.Params(c))
	require.NoError(t, err)
	assert.JSONEq(t, `{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false,"session":{"notices":{}},"subagents":{}},"clientInfo":{"name":"acpdrive","version":"t"}}`, string(b))
}
