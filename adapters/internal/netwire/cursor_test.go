package netwire

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAddCursor(t *testing.T) {
	for _, tc := range []struct{ name, in, want, back string }{
		{"params", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"a":"}\"{"}}}`,
			`{"jsonrpc":"2.0","method":"session/update","params":{"_meta":{"acp/cursor":"7"},"sessionId":"s","update":{"a":"}\"{"}}}`, ""},
		{"params with _meta", `{"method":"m","params":{"x":[1,{"y":2}],"_meta":{"k":1}}}`,
			`{"method":"m","params":{"x":[1,{"y":2}],"_meta":{"acp/cursor":"7","k":1}}}`, ""},
		{"empty _meta", `{"method":"m","params":{"_meta":{}}}`, `{"method":"m","params":{"_meta":{"acp/cursor":"7"}}}`,
			`{"method":"m","params":{}}`}, // an empty _meta of the runtime's is not told apart
		{"empty params", `{"method":"m","params":{}}`, `{"method":"m","params":{"_meta":{"acp/cursor":"7"}}}`, ""},
		{"result", `{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`,
			`{"jsonrpc":"2.0","id":3,"result":{"_meta":{"acp/cursor":"7"},"stopReason":"end_turn"}}`, ""},
		{"null result", `{"jsonrpc":"2.0","id":3,"result":null}`, `{"_meta":{"acp/cursor":"7"},"jsonrpc":"2.0","id":3,"result":null}`, ""},
		{"error", `{"id":3,"error":{"code":1}}`, `{"_meta":{"acp/cursor":"7"},"id":3,"error":{"code":1}}`, ""},
		{"spaces", `{ "params" : { "a" : 1 } }`, `{ "params" : {"_meta":{"acp/cursor":"7"}, "a" : 1 } }`, ""},
		{"not an object", `[1]`, `[1]`, ""},
		{"not JSON", `echo {"a":1}`, `echo {"a":1}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := AddCursor(nil, []byte(tc.in), 7)
			assert.Equal(t, tc.want, string(got))
			if json.Valid([]byte(tc.in)) && tc.in[0] == '{' {
				require.True(t, json.Valid(got), string(got))
				assert.Equal(t, "7", Cursor(got))
				back, cur := StripCursor(got)
				assert.Equal(t, "7", string(cur))
				if tc.back == "" {
					tc.back = tc.in
				}
				assert.Equal(t, tc.back, string(back), "stripped, the runtime's message as it was")
			}
		})
	}
}

func TestAddResumable(t *testing.T) {
	r := Retention{Messages: 10, Seconds: 2}
	got := AddResumable([]byte(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true},"agentInfo":{"title":"<a & b>"}}}`), r)
	assert.Contains(t, string(got), `"agentInfo":{"title":"<a & b>"}`, "the runtime's strings keep their bytes")
	back, ok := Resumable(got)
	require.True(t, ok, string(got))
	assert.Equal(t, r, back)
	assert.Contains(t, string(got), `"agentCapabilities":{"loadSession":true}`)
	assert.Contains(t, string(got), `"protocolVersion":1`)

	_, ok = Resumable([]byte(`{"id":0,"result":{}}`))
	assert.False(t, ok)
	own := `{"id":0,"result":{"capabilities":{"transport":{"x":1}}}}`
	assert.Equal(t, own, string(AddResumable([]byte(own), r)))
	errAnswer := `{"id":0,"error":{"code":1}}`
	assert.Equal(t, errAnswer, string(AddResumable([]byte(errAnswer), r)))
}
