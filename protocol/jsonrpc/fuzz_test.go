package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

var fuzzSeeds = []string{
	``,
	`{}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi \"there\"\n"}}}}`,
	`{"jsonrpc":"2.0","id":0,"result":{"stopReason":"end_turn"}}`,
	`{"jsonrpc":"2.0","id":0,"result":{"stopReason":"end_turn"},"error":{"code":-32603,"message":"m"}}`,
	`{"jsonrpc":"2.0","id":0,"result":null,"error":{"code":1,"message":"m"}}`,
	`{"jsonrpc":"2.0","id":"0","method":"fs/read_text_file","params":{"path":"/a"}}`,
	`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":[1,2.5e-3,true,false,null]}}`,
	`{"m\u0065thod":"x","jsonrpc":"2.0"}`,
	`[1,{"a":[]}]`,
	`-0.5E+10`,
	`"\ud800\u00e9\/"`,
	"{\"a\":\"\xff\xfe\"}",
	`{"a" : 1 , "b" : [ ] }`,
	`{"a":1,}`,
	`[01]`,
	`tru`,
	"\r\n\n{\"jsonrpc\":\"2.0\",\"method\":\"m\"}\r\nnot json\n",
}

// FuzzValidJSON checks the scanner against encoding/json.Valid.
func FuzzValidJSON(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid = %v", b, got, want)
		}
	})
}

// FuzzScanEnvelope checks the envelope scanner against decoding into a map
// with encoding/json: same acceptance, same raw member values.
func FuzzScanEnvelope(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var env envelope
		err := scanEnvelope(line, &env)
		trimmed := bytes.TrimLeft(line, " \t\r\n")
		var m map[string]json.RawMessage
		refErr := json.Unmarshal(line, &m)
		if len(trimmed) == 0 || trimmed[0] != '{' {
			refErr = fmt.Errorf("not an object")
		}
		if (err == nil) != (refErr == nil) {
			t.Fatalf("scanEnvelope(%q) error = %v, encoding/json error = %v", line, err, refErr)
		}
		if err != nil {
			return
		}
		for name, got := range map[string][]byte{
			"jsonrpc": env.version, "id": env.id, "method": env.method,
			"params": env.params, "result": env.result, "error": env.err,
		} {
			want, ok := m[name]
			if ok != (got != nil) || string(got) != string(want) {
				t.Fatalf("%q: member %s = %q, encoding/json has %q (present %v)", line, name, got, want, ok)
			}
		}
		// Classification never panics and agrees on the version rule.
		k, cerr := env.classify()
		if cerr == nil {
			var v string
			if json.Unmarshal(m["jsonrpc"], &v) != nil || v != "2.0" {
				t.Fatalf("%q classified with version %s", line, m["jsonrpc"])
			}
		}
		// A response is ambiguous exactly when it has both a non-null
		// result and a non-null error.
		if cerr == nil && (k == kindResponse || k == kindAmbiguousResponse) {
			_, hasMethod := m["method"]
			both := m["result"] != nil && string(m["result"]) != "null" &&
				m["error"] != nil && string(m["error"]) != "null"
			if hasMethod || m["id"] == nil || both != (k == kindAmbiguousResponse) {
				t.Fatalf("%q classified as %d", line, k)
			}
		}
	})
}

// FuzzConn feeds arbitrary bytes to a connection while a call with id 0
// waits: it must never panic, must end cleanly at EOF, the call must be
// completed (by a response, or with ErrClosed at the end), and every
// non-blank line must come out as at most one of the handler calls, the
// call's response, or a dropped response.
func FuzzConn(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), uint8(16))
		f.Add([]byte(s), uint8(255))
	}
	f.Fuzz(func(t *testing.T, input []byte, maxLine uint8) {
		h := &recorder{}
		r, w := io.Pipe()
		c := NewConn(r, io.Discard, h, Options{MaxLineBytes: int(maxLine) + 1})
		call, err := c.Send(context.Background(), "m", nil)
		if err != nil {
			t.Fatalf("Send = %v", err)
		}
		var feeding sync.WaitGroup
		feeding.Go(func() {
			_, _ = w.Write(input)
			_ = w.Close()
		})
		c.Wait()
		feeding.Wait()
		if c.Err() != io.EOF {
			t.Fatalf("Err() = %v", c.Err())
		}
		answered := 0
		select {
		case <-call.Done():
			if _, err := call.Result(); !errors.Is(err, ErrClosed) {
				answered = 1
			}
		default:
			t.Fatal("the waiting call was never completed")
		}
		for _, m := range h.malformed {
			if m.err == nil {
				t.Fatal("HandleMalformed without a reason")
			}
		}
		items := referenceLines(string(input), int(maxLine)+1)
		nonBlank := 0
		for _, it := range items {
			if it.oversize > 0 || strings.TrimLeft(it.line, " \t\r\n") != "" {
				nonBlank++
			}
		}
		handled := len(h.notifications) + len(h.requests) + len(h.malformed) + len(h.oversize) + answered
		if handled > nonBlank {
			t.Fatalf("%d handler calls for %d non-blank lines", handled, nonBlank)
		}
	})
}

// FuzzLineReader checks the bounded reader against the obvious definition,
// with a tiny bufio buffer so that long-line paths run. An oversize line may
// be reported before all of it was read, with any length above the bound up
// to its full length.
func FuzzLineReader(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, uint8(4), uint8(0))
	}
	f.Add(strings.Repeat("x", 40)+"\r\n\r\n", uint8(20), uint8(3))
	f.Fuzz(func(t *testing.T, input string, maxLine, bufExtra uint8) {
		lr := newLineReader(strings.NewReader(input), int(maxLine)+1, 16+int(bufExtra%32))
		got, err := drain(lr)
		if err != io.EOF {
			t.Fatalf("error = %v", err)
		}
		want := referenceLines(input, int(maxLine)+1)
		if !sameItems(got, want, int(maxLine)+1) {
			t.Fatalf("input %q max %d:\n got %v\nwant %v", input, int(maxLine)+1, got, want)
		}
		// Again with an idle buffer smaller than the flowing one, with
		// full reads and with reads of every size, so that the buffer
		// grows and shrinks.
		for _, r := range []io.Reader{strings.NewReader(input), iotest.HalfReader(strings.NewReader(input))} {
			lr = newLineReader(r, int(maxLine)+1, 32+int(bufExtra%64))
			lr.small = make([]byte, 16)
			lr.buf = lr.small
			if got, err = drain(lr); err != io.EOF {
				t.Fatalf("error = %v", err)
			}
			if !sameItems(got, want, int(maxLine)+1) {
				t.Fatalf("small idle buffer, input %q max %d:\n got %v\nwant %v", input, int(maxLine)+1, got, want)
			}
		}
	})
}

// FuzzAppendJSONString checks the string encoder against encoding/json.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := appendJSONString(nil, s)
		if bytes.IndexByte(enc, '\n') >= 0 || !utf8.Valid(enc) {
			t.Fatalf("encoding of %q is not one valid UTF-8 line: %q", s, enc)
		}
		var got, want string
		if err := json.Unmarshal(enc, &got); err != nil {
			t.Fatalf("encoding of %q does not decode: %v", s, err)
		}
		ref, _ := json.Marshal(s)
		if err := json.Unmarshal(ref, &want); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("%q: round trip %q, encoding/json %q", s, got, want)
		}
	})
}

// FuzzIDRoundTrip checks that an id decodes exactly when it is null, a
// number or a string (as encoding/json sees the value), and that a decoded
// id encodes back as sent: a number byte for byte, a string to the same
// value, so that a reply echoes the request's id.
func FuzzIDRoundTrip(f *testing.F) {
	for _, s := range []string{`0`, `-0`, `2.5`, `1e3`, `1E+400`, `-0.5e-3`, `123456789012345678901234567890`,
		`"0"`, `"a\u00e9\n"`, `null`, `true`, `{}`, `[1]`, `01`, `1.`, ` 7 `, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var id ID
		err := id.UnmarshalJSON(b)
		v := trimSpace(b)
		var want bool
		if json.Valid(v) {
			switch c := v[0]; {
			case c == 'n', c == '"', c == '-', c >= '0' && c <= '9':
				want = true
			}
		}
		if (err == nil) != want {
			t.Fatalf("UnmarshalJSON(%q) = %v; want accepted %v", b, err, want)
		}
		if err != nil {
			return
		}
		out, _ := id.MarshalJSON()
		switch v[0] {
		case '"':
			var got, sent string
			if json.Unmarshal(out, &got) != nil || json.Unmarshal(v, &sent) != nil || got != sent {
				t.Fatalf("string id %q encodes as %q", v, out)
			}
		default:
			if !bytes.Equal(out, v) {
				t.Fatalf("id %q encodes as %q", v, out)
			}
		}
	})
}
