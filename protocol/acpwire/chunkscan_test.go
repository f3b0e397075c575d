package acpwire

import (
	"encoding/json"
	"reflect"
	"testing"
)

// chunkCases are params the fast path must take (take true) or leave to
// encoding/json (take false); either way DecodeSessionUpdate must give
// what encoding/json gives.
var chunkCases = []struct {
	name   string
	params string
	take   bool
}{
	{"plain", `{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"hi"}}}`, true},
	{"keys in another order", `{"update":{"content":{"text":"hi","type":"text"},"messageId":"m","sessionUpdate":"user_message_chunk"},"sessionId":"s"}`, true},
	{"whitespace", " {\n\"sessionId\" : \"s\" ,\t\"update\":{ \"sessionUpdate\":\"agent_thought_chunk\" , \"content\" : { \"type\":\"text\" } } }\r\n", true},
	{"escapes", `{"sessionId":"a\/b","update":{"sessionUpdate":"agent_message_chunk","messageId":"m\"1","content":{"type":"te\\xt","text":"line\nnext\ttab \"q\" \\ \b\f\r"}}}`, true},
	{"utf-8", `{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"héllo ☃ 𝄞"}}}`, true},
	{"empty objects and strings", `{"sessionId":"","update":{"sessionUpdate":"agent_message_chunk","content":{}}}`, true},
	{"no session id", `{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}`, true},
	{"unicode escape", `{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"\u00e9\ud834\udd1e"}}}`, false},
	{"lone surrogate", `{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"\ud800"}}}`, false},
	{"invalid utf-8", "{\"sessionId\":\"s\",\"update\":{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{\"type\":\"text\",\"text\":\"\xff\"}}}", false},
	{"duplicate key", `{"sessionId":"a","sessionId":"b","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}`, false},
	{"another key", `{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x","annotations":{}}}}`, false},
	{"key in another case", `{"SessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}`, false},
	{"null text", `{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":null}}}`, false},
	{"no content", `{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","messageId":"m"}}`, false},
	{"not a chunk", `{"sessionId":"s","update":{"sessionUpdate":"plan","content":{"type":"text","text":"x"}}}`, false},
	{"trailing bytes", `{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}} x`, false},
	{"unterminated", `{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x`, false},
	{"control byte", "{\"sessionId\":\"s\",\"update\":{\"sessionUpdate\":\"agent_message_chunk\",\"content\":{\"type\":\"text\",\"text\":\"a\x01\"}}}", false},
	{"trailing comma", `{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"},}}`, false},
}

func TestScanChunk(t *testing.T) {
	for _, c := range chunkCases {
		t.Run(c.name, func(t *testing.T) {
			_, _, took := scanChunk([]byte(c.params))
			if took != c.take {
				t.Errorf("fast path taken: %v, want %v", took, c.take)
			}
			checkSameAsJSON(t, []byte(c.params))
		})
	}
}

// checkSameAsJSON fails when the fast path takes params and gives anything
// other than what encoding/json gives.
func checkSameAsJSON(t *testing.T, params []byte) {
	t.Helper()
	sid, u, ok := scanChunk(params)
	if !ok {
		return
	}
	wantSID, want, err := decodeSessionUpdateJSON(params)
	if err != nil {
		t.Fatalf("fast path took %q, which encoding/json refuses: %v", params, err)
	}
	if sid != wantSID || u.Kind != want.Kind || u.Known != want.Known || want.Chunk == nil || !reflect.DeepEqual(*u.Chunk, *want.Chunk) ||
		u.ToolCall != nil || u.Plan != nil || u.Usage != nil || u.Raw != nil || want.Raw != nil {
		t.Fatalf("fast path gave %q %+v %+v, encoding/json %q %+v %+v for %q", sid, u, u.Chunk, wantSID, want, want.Chunk, params)
	}
}

// FuzzScanChunk: whatever the fast path takes, encoding/json decodes the
// same way.
func FuzzScanChunk(f *testing.F) {
	for _, c := range chunkCases {
		f.Add([]byte(c.params))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		checkSameAsJSON(t, params)
		// The public function never fails where encoding/json succeeds.
		if _, _, err := DecodeSessionUpdate(json.RawMessage(params)); err == nil {
			return
		}
		if _, _, err := decodeSessionUpdateJSON(params); err == nil {
			t.Fatalf("DecodeSessionUpdate failed on %q, which encoding/json decodes", params)
		}
	})
}
