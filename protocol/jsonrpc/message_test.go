package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

const nextLine = `{"jsonrpc":"2.0","method":"after","params":[1]}`

func TestMalformedLines(t *testing.T) {
	var syntax *syntaxError
	tests := []struct {
		name   string
		line   string
		reason error // nil: a JSON syntax error
	}{
		{name: "not JSON", line: `hello, agent here`},
		{name: "truncated object", line: `{"jsonrpc":"2.0","method":"x"`},
		{name: "trailing data", line: `{"jsonrpc":"2.0","method":"x"} {}`},
		{name: "bad params", line: `{"jsonrpc":"2.0","method":"x","params":{bad}}`},
		{name: "control byte in string", line: "{\"jsonrpc\":\"2.0\",\"method\":\"a\tb\"}"},
		{name: "bad escape", line: `{"jsonrpc":"2.0","method":"a\qb"}`},
		{name: "leading zero", line: `{"jsonrpc":"2.0","id":01,"result":1}`},
		{name: "JSON array", line: `[{"jsonrpc":"2.0","method":"x"}]`, reason: errNotObject},
		{name: "JSON string", line: `"session/update"`, reason: errNotObject},
		{name: "JSON null", line: `null`, reason: errNotObject},
		{name: "missing jsonrpc", line: `{"method":"x","params":{}}`, reason: errNoVersion},
		{name: "jsonrpc key case", line: `{"JSONRPC":"2.0","method":"x"}`, reason: errNoVersion},
		{name: "wrong version", line: `{"jsonrpc":"1.0","method":"x"}`, reason: errBadVersion},
		{name: "numeric version", line: `{"jsonrpc":2.0,"method":"x"}`, reason: errBadVersion},
		{name: "neither method nor id", line: `{"jsonrpc":"2.0","params":{}}`, reason: errNoMethodOrID},
		{name: "empty object", line: `{}`, reason: errNoVersion},
		{name: "method not a string", line: `{"jsonrpc":"2.0","method":3}`, reason: errMethodNotString},
		{name: "null method", line: `{"jsonrpc":"2.0","method":null}`, reason: errMethodNotString},
		{name: "array id", line: `{"jsonrpc":"2.0","id":[1],"method":"x"}`, reason: errBadID},
		{name: "array id in a response", line: `{"jsonrpc":"2.0","id":[0],"result":1}`, reason: errBadID},
		{name: "boolean id", line: `{"jsonrpc":"2.0","id":true,"method":"x"}`, reason: errBadID},
		{name: "object id", line: `{"jsonrpc":"2.0","id":{},"method":"x"}`, reason: errBadID},
		{name: "response without result or error", line: `{"jsonrpc":"2.0","id":0}`, reason: errNoResultOrError},
		{name: "response with only null error", line: `{"jsonrpc":"2.0","id":0,"error":null}`, reason: errNoResultOrError},
		{name: "response with result and error", line: `{"jsonrpc":"2.0","id":0,"result":1,"error":{"code":1,"message":"m"}}`, reason: errResultAndError},
		{name: "response with result and a bad error, no call waiting", line: `{"jsonrpc":"2.0","id":"0","result":{},"error":"boom"}`, reason: errResultAndError},
		{name: "error not an object", line: `{"jsonrpc":"2.0","id":0,"error":"boom"}`, reason: errBadErrorObject},
		{name: "error without code", line: `{"jsonrpc":"2.0","id":0,"error":{"message":"boom"}}`, reason: errBadErrorObject},
		{name: "error with fractional code", line: `{"jsonrpc":"2.0","id":0,"error":{"code":1.5,"message":"boom"}}`, reason: errBadErrorObject},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := readAll(t, tt.line+"\n"+nextLine+"\n", Options{})
			if len(h.malformed) != 1 {
				t.Fatalf("HandleMalformed called %d times, want 1", len(h.malformed))
			}
			got := h.malformed[0]
			if got.line != tt.line {
				t.Errorf("line = %q, want %q", got.line, tt.line)
			}
			if tt.reason != nil && !errors.Is(got.err, tt.reason) {
				t.Errorf("err = %v, want %v", got.err, tt.reason)
			}
			if tt.reason == nil && !errors.As(got.err, &syntax) {
				t.Errorf("err = %v, want a syntax error", got.err)
			}
			if !strings.HasPrefix(got.err.Error(), "jsonrpc: malformed message: ") {
				t.Errorf("err text = %q", got.err)
			}
			if len(h.notifications) != 1 || h.notifications[0].method != "after" {
				t.Errorf("the connection did not go on: notifications = %v", h.notifications)
			}
		})
	}
}

func TestWellFormedLines(t *testing.T) {
	tests := []struct {
		name   string
		input  string
		method string // "" means no notification expected
		params string
	}{
		{name: "no params", input: `{"jsonrpc":"2.0","method":"session/cancel"}`, method: "session/cancel"},
		{name: "null params", input: `{"jsonrpc":"2.0","method":"m","params":null}`, method: "m", params: "null"},
		{name: "whitespace", input: " \t{ \"jsonrpc\" : \"2.0\" , \"method\" : \"m\" , \"params\" : [ 1 , 2 ] } \t", method: "m", params: "[ 1 , 2 ]"},
		{name: "crlf", input: "{\"jsonrpc\":\"2.0\",\"method\":\"m\",\"params\":{}}\r", method: "m", params: "{}"},
		{name: "escaped member names", input: `{"jsonrp\u0063":"2.0","m\u0065thod":"m","par\u0061ms":{}}`, method: "m", params: "{}"},
		{name: "escaped method", input: `{"jsonrpc":"2.0","method":"session\/update"}`, method: "session/update"},
		{name: "escaped version", input: `{"jsonrpc":"2\u002e0","method":"m"}`, method: "m"},
		{name: "unicode method", input: `{"jsonrpc":"2.0","method":"_zed.dev/éé"}`, method: "_zed.dev/éé"},
		{name: "extra members ignored", input: `{"jsonrpc":"2.0","method":"m","_meta":{"a":[1,{"b":null}]},"x":true}`, method: "m"},
		{name: "repeated member: last wins", input: `{"jsonrpc":"2.0","method":"first","method":"second"}`, method: "second"},
		{name: "blank line ignored", input: "   \t"},
		{name: "empty line ignored", input: ""},
		{name: "response to unknown id dropped", input: `{"jsonrpc":"2.0","id":42,"result":{}}`},
		{name: "error response to null id dropped", input: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`},
		{name: "response to string id dropped", input: `{"jsonrpc":"2.0","id":"0","result":{}}`},
		{name: "response to fractional id dropped", input: `{"jsonrpc":"2.0","id":1.5,"result":{}}`},
		{name: "error response to exponent id dropped", input: `{"jsonrpc":"2.0","id":1e3,"error":{"code":1,"message":"m"}}`},
		{name: "null error beside result", input: `{"jsonrpc":"2.0","id":5,"result":{},"error":null}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := readAll(t, tt.input+"\n", Options{})
			if len(h.malformed) != 0 || len(h.oversize) != 0 || len(h.requests) != 0 {
				t.Fatalf("malformed %v, oversize %v, requests %v", h.malformed, h.oversize, h.requests)
			}
			if tt.method == "" {
				if len(h.notifications) != 0 {
					t.Errorf("notifications = %v, want none", h.notifications)
				}
				return
			}
			want := []notification{{method: tt.method, params: tt.params}}
			if len(h.notifications) != 1 || h.notifications[0] != want[0] {
				t.Errorf("notifications = %q, want %q", h.notifications, want)
			}
		})
	}
}

func TestRequestParamsAreCopied(t *testing.T) {
	h := readAll(t, `{"jsonrpc":"2.0","id":1,"method":"session/request_permission","params":{"a":1}}`+"\n"+
		`{"jsonrpc":"2.0","id":2,"method":"zzzzzzzzzzzzzzzzzzzzzzzzzzzz/zzzzzzzz","params":{"b":2}}`+"\n", Options{})
	if len(h.requests) != 2 {
		t.Fatalf("requests = %v", h.requests)
	}
	if string(h.requests[0].Params) != `{"a":1}` || h.requests[0].Method != "session/request_permission" {
		t.Errorf("first request = %s %s (overwritten?)", h.requests[0].Method, h.requests[0].Params)
	}
}

func TestMethodNameCache(t *testing.T) {
	var in strings.Builder
	methods := []string{"session/update", "session/update", "a", "session/update", `b\"c`, `b\"c`, "a"}
	for _, m := range methods {
		in.WriteString(`{"jsonrpc":"2.0","method":"` + m + `"}` + "\n")
	}
	h := readAll(t, in.String(), Options{})
	if len(h.notifications) != len(methods) {
		t.Fatalf("notifications = %v", h.notifications)
	}
	for i, m := range methods {
		var want string
		if err := json.Unmarshal([]byte(`"`+m+`"`), &want); err != nil {
			t.Fatal(err)
		}
		if h.notifications[i].method != want {
			t.Errorf("notification %d method = %q, want %q", i, h.notifications[i].method, want)
		}
	}
}

func TestValidJSONDepthMatchesEncodingJSON(t *testing.T) {
	for _, depth := range []int{1, 100, maxDepth, maxDepth + 1} {
		for _, open := range []string{"[", `{"a":`} {
			closing := map[string]string{"[": "]", `{"a":`: "}"}[open]
			doc := []byte(strings.Repeat(open, depth) + "1" + strings.Repeat(closing, depth))
			if got, want := validJSON(doc), json.Valid(doc); got != want {
				t.Errorf("depth %d %s: validJSON = %v, json.Valid = %v", depth, open, got, want)
			}
		}
	}
}

func TestAppendJSONString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `""`},
		{"plain", `"plain"`},
		{"q\"b\\", `"q\"b\\"`},
		{"\n\r\t\x00\x1f", `"\n\r\t\u0000\u001f"`},
		{"<&>", `"<&>"`},
		{"é\u2028\u2029", `"é\u2028\u2029"`},
		{"a\xffb", `"a\ufffdb"`},
	}
	for _, tt := range tests {
		if got := string(appendJSONString(nil, tt.in)); got != tt.want {
			t.Errorf("appendJSONString(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestAttentionFindsFirstSpecialByte(t *testing.T) {
	special := func(c byte) bool { return c == '"' || c == '\\' || c < 0x20 }
	for _, filler := range []byte{'a', 0x80, 0xff, ' '} {
		for c := range 256 {
			for pos := range 8 {
				word := bytes.Repeat([]byte{filler}, 8)
				word[pos] = byte(c)
				if pos < 7 {
					word[pos+1] = 0 // a later special byte must not hide this one
				}
				want := 8
				for i, b := range word {
					if special(b) {
						want = i
						break
					}
				}
				got := nextSpecial(word, 0)
				if got != want {
					t.Fatalf("nextSpecial(% x) = %d, want %d", word, got, want)
				}
			}
		}
	}
}
