package refagent

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const initReqV2 = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"test","version":"1"},"capabilities":{}}}`

// TestProtocolV2Wire: --protocol 2 refuses a v1 initialize with -32022,
// answers a v2 one in v2's shape, accepts a prompt at once and ends it
// with the idle carrying the stop reason.
func TestProtocolV2Wire(t *testing.T) {
	h := startAgent(t, "--protocol", "2")
	h.send(initReq)
	h.expect(`{"jsonrpc":"2.0","id":0,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"requested":1,"supported":[2]}}}`)
	h.send(initReqV2)
	h.expect(`{"jsonrpc":"2.0","id":0,"result":{"authMethods":[],"capabilities":{"session":{"mcp":{"stdio":{}},"prompt":{}}},"info":{"name":"acpdrive-reference-agent","title":"acpdrive reference agent","version":"0.1.0"},"protocolVersion":2}}`)
	h.send(newReq)
	h.expect(newResp)
	h.send(prompt(2, "ref-1", "#stop-refusal"))
	h.expect(
		`{"jsonrpc":"2.0","id":2,"result":{"messageId":"user-1"}}`,
		update("ref-1", `{"content":[{"text":"#stop-refusal","type":"text"}],"messageId":"user-1","sessionUpdate":"user_message"}`),
		update("ref-1", `{"sessionUpdate":"state_update","state":"running"}`),
	)
	var last string
	for last = h.next(); !assert.ObjectsAreEqual(last, update("ref-1", `{"sessionUpdate":"state_update","state":"idle","stopReason":"refusal"}`)); last = h.next() {
		require.Contains(t, last, "agent_message_chunk", "only the turn's chunks before the idle")
	}
	assert.Equal(t, 0, h.closeStdin())
}

// TestProtocolAutoServesWhatIsAsked: --protocol auto answers v1 to v1.
func TestProtocolAutoServesWhatIsAsked(t *testing.T) {
	h := startAgent(t, "--protocol", "auto")
	h.send(initReq)
	h.expect(initResp)
	assert.Equal(t, 0, h.closeStdin())
}

// TestProtocolFlagRefusesOtherValues: a --protocol that is none of 1, 2,
// auto is a usage error.
func TestProtocolFlagRefusesOtherValues(t *testing.T) {
	h := startAgent(t, "--protocol", "3")
	assert.Equal(t, 2, h.wait())
}
