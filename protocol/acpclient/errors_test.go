package acpclient_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/acpdrive/acpdrive/protocol/acpclient"
	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

func TestOperatorMessage(t *testing.T) {
	long := strings.Repeat("é", 2*acpclient.MaxDataRunes)
	cases := []struct {
		name string
		data string
		want string
	}{
		{"no data", "", "session/prompt error -32603: Internal error"},
		{"null data", "null", "session/prompt error -32603: Internal error"},
		{"string data", `"upstream 429: rate limited\nretry later"`, "session/prompt error -32603: Internal error (data: upstream 429: rate limited retry later)"},
		{"object data keeps its order", `{"status": 400,  "body": {"error":"bad model"}}`, `session/prompt error -32603: Internal error (data: {"status":400,"body":{"error":"bad model"}})`},
		{"control characters", `"a\u0007b\tc"`, "session/prompt error -32603: Internal error (data: a b c)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := &jsonrpc.Error{Code: -32603, Message: "Internal error"}
			if c.data != "" {
				e.Data = json.RawMessage(c.data)
			}
			if got := acpclient.OperatorMessage("session/prompt", e); got != c.want {
				t.Fatalf("OperatorMessage = %q\nwant            %q", got, c.want)
			}
		})
	}
	t.Run("long data is cut", func(t *testing.T) {
		got := acpclient.RenderData(json.RawMessage(`"`+long+`"`), acpclient.MaxDataRunes)
		if n := utf8.RuneCountInString(got); n != acpclient.MaxDataRunes || !strings.HasSuffix(got, "…") {
			t.Fatalf("RenderData kept %d runes ending %q", n, got[len(got)-3:])
		}
	})
}

func TestCallErrorUnwrapsToTheRPCError(t *testing.T) {
	var err error = &acpclient.CallError{Method: "initialize", RPC: &jsonrpc.Error{Code: jsonrpc.CodeAuthRequired, Message: "auth"}}
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeAuthRequired {
		t.Fatalf("errors.As found %v", rpc)
	}
	if err.Error() != "initialize error -32000: auth" {
		t.Fatalf("Error() = %q", err.Error())
	}
}
