package netwire

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestInitializeIDAndAnswers(t *testing.T) {
	for _, tc := range []struct {
		msg, id string
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"initialize","params":{}}`, "7"},
		{`{"jsonrpc":"2.0","id":"a","method":"initialize"}`, `"a"`},
		{`{"jsonrpc":"2.0","method":"initialize"}`, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"x":"initialize"}}`, ""},
		{`not json "initialize"`, ""},
	} {
		assert.Equal(t, tc.id, string(InitializeID([]byte(tc.msg))), tc.msg)
	}
	assert.True(t, Answers([]byte(`{"jsonrpc":"2.0","id":7,"result":{}}`), []byte("7")))
	assert.True(t, Answers([]byte(`{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"m"}}`), []byte("7")))
	assert.False(t, Answers([]byte(`{"jsonrpc":"2.0","id":7,"method":"x"}`), []byte("7")), "a request is no answer")
	assert.False(t, Answers([]byte(`{"jsonrpc":"2.0","id":8,"result":{}}`), []byte("7")))
}
