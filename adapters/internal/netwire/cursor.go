package netwire

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// The durable, resumable transport (docs/behaviour.md#network): every
// message a server sends on a stream that can resume carries a cursor, as
// the SSE id: and as _meta["acp/cursor"]; a WebSocket client that lost its
// link dials again naming the connection and sends ResumeMethod with the
// last cursor it received as its first frame.
const (
	// CursorKey is the _meta key of a message's cursor.
	CursorKey = "acp/cursor"
	// ResumeMethod is the WebSocket client's request to resume after a
	// cursor.
	ResumeMethod = "stream/resume"
	// ResumeFailedMethod is the server's notification that it cannot
	// resume (the cursor or the connection is no longer held).
	ResumeFailedMethod = "stream/resume_failed"
	// ResumeRequestID is the id of the client's resume request.
	ResumeRequestID = "acpdrive-resume"
)

// Retention is what a server advertises under
// capabilities.transport.resumable in its initialize answer.
type Retention struct {
	// Messages is how many of the latest messages are held at least.
	Messages int `json:"retentionMessages"`
	// Seconds is how long a connection whose link dropped is held.
	Seconds float64 `json:"retentionSeconds"`
}

// AddCursor returns msg with _meta["acp/cursor"] set to the decimal seq:
// in params when it is an object, else in result when it is an object,
// else at the top level. msg that is not a JSON object is returned as is.
// It appends to dst (which may be nil) and allocates nothing else.
func AddCursor(dst, msg []byte, seq int64) []byte {
	var num [20]byte
	cur := strconv.AppendInt(num[:0], seq, 10)
	obj := span(msg, "params")
	if obj < 0 || msg[obj] != '{' {
		obj = span(msg, "result")
	}
	if obj < 0 || msg[obj] != '{' {
		obj = skipSpace(msg, 0)
		if obj >= len(msg) || msg[obj] != '{' {
			return append(dst, msg...)
		}
	}
	inner := msg[obj:]
	if m := span(inner, "_meta"); m >= 0 && inner[m] == '{' {
		at := obj + m + 1
		dst = append(dst, msg[:at]...)
		dst = append(dst, `"`+CursorKey+`":"`...)
		dst = append(dst, cur...)
		dst = append(dst, '"')
		if !emptyObject(msg[at:]) {
			dst = append(dst, ',')
		}
		return append(dst, msg[at:]...)
	}
	at := obj + 1
	dst = append(dst, msg[:at]...)
	dst = append(dst, `"_meta":{"`+CursorKey+`":"`...)
	dst = append(dst, cur...)
	dst = append(dst, `"}`...)
	if !emptyObject(msg[at:]) {
		dst = append(dst, ',')
	}
	return append(dst, msg[at:]...)
}

// emptyObject reports whether rest (what follows an object's "{") closes
// the object at once.
func emptyObject(rest []byte) bool {
	t := bytes.TrimLeft(rest, " \t\r\n")
	return len(t) > 0 && t[0] == '}'
}

// Cursor is the message's _meta["acp/cursor"] as AddCursor wrote it, ""
// when it has none. The server's cursor is the first such key in the
// message (AddCursor puts it before anything of the runtime's).
func Cursor(msg []byte) string {
	const key = `"` + CursorKey + `":"`
	i := bytes.Index(msg, []byte(key))
	if i < 0 {
		return ""
	}
	rest := msg[i+len(key):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return ""
	}
	return string(rest[:j])
}

// span returns the offset in obj (a JSON object) of the value of its
// top-level key, -1 when obj has no such key or is not an object. It
// scans without decoding.
func span(obj []byte, key string) int {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return -1
	}
	i++
	for {
		i = skipSpace(obj, i)
		if i >= len(obj) || obj[i] != '"' {
			return -1
		}
		end := skipString(obj, i)
		if end < 0 {
			return -1
		}
		name := obj[i+1 : end-1]
		i = skipSpace(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return -1
		}
		i = skipSpace(obj, i+1)
		if string(name) == key {
			if i >= len(obj) {
				return -1
			}
			return i
		}
		if i = skipValue(obj, i); i < 0 {
			return -1
		}
		i = skipSpace(obj, i)
		if i >= len(obj) || obj[i] != ',' {
			return -1
		}
		i++
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// skipString returns the offset after the string starting at b[i] ('"').
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipValue returns the offset after the value starting at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				if i = skipString(b, i); i < 0 {
					return -1
				}
				i--
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\n' && b[i] != '\r' && b[i] != '\t' {
		i++
	}
	return i
}

// AddResumable returns the initialize answer msg with
// capabilities.transport.resumable set to r in its result (merged into a
// capabilities object the runtime sent; one with its own transport is
// left alone). msg whose result is not an object is returned as is.
func AddResumable(msg []byte, r Retention) []byte {
	var top map[string]json.RawMessage
	if json.Unmarshal(msg, &top) != nil {
		return msg
	}
	var result map[string]json.RawMessage
	if json.Unmarshal(top["result"], &result) != nil || result == nil {
		return msg
	}
	caps := map[string]json.RawMessage{}
	if raw, ok := result["capabilities"]; ok && json.Unmarshal(raw, &caps) != nil {
		return msg
	}
	if _, ok := caps["transport"]; ok {
		return msg
	}
	transport, _ := json.Marshal(struct {
		Resumable Retention `json:"resumable"`
	}{r})
	caps["transport"] = transport
	var err error
	if result["capabilities"], err = marshalAsIs(caps); err != nil {
		return msg
	}
	if top["result"], err = marshalAsIs(result); err != nil {
		return msg
	}
	out, err := marshalAsIs(top)
	if err != nil {
		return msg
	}
	return out
}

// marshalAsIs encodes m without escaping HTML characters, so the
// runtime's strings keep their bytes.
func marshalAsIs(m map[string]json.RawMessage) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// Resumable reads capabilities.transport.resumable from an initialize
// answer; ok false when the server offers no resume.
func Resumable(msg []byte) (Retention, bool) {
	var m struct {
		Result struct {
			Capabilities struct {
				Transport struct {
					Resumable *Retention `json:"resumable"`
				} `json:"transport"`
			} `json:"capabilities"`
		} `json:"result"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Result.Capabilities.Transport.Resumable == nil {
		return Retention{}, false
	}
	return *m.Result.Capabilities.Transport.Resumable, true
}

// ResumeRequest is the client's stream/resume request after cursor.
func ResumeRequest(cursor string) []byte {
	b, _ := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      string `json:"id"`
		Method  string `json:"method"`
		Params  struct {
			Cursor string `json:"cursor"`
		} `json:"params"`
	}{JSONRPC: "2.0", ID: ResumeRequestID, Method: ResumeMethod, Params: struct {
		Cursor string `json:"cursor"`
	}{cursor}})
	return b
}

// ResumeAnswer is the server's answer to a stream/resume request of id:
// received is how many of the client's messages on this connection have
// reached the runtime, so the client sends the ones after them again.
func ResumeAnswer(id json.RawMessage, received int64) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  struct {
			Received int64 `json:"received"`
		} `json:"result"`
	}{JSONRPC: "2.0", ID: id, Result: struct {
		Received int64 `json:"received"`
	}{received}})
	return b
}

// ResumeFailed is the server's stream/resume_failed notification.
func ResumeFailed(reason string) []byte {
	b, _ := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  struct {
			Reason string `json:"reason"`
		} `json:"params"`
	}{JSONRPC: "2.0", Method: ResumeFailedMethod, Params: struct {
		Reason string `json:"reason"`
	}{reason}})
	return b
}

// StripCursor removes from msg, in place, the cursor AddCursor put in it
// (so what reaches the client's reader is the runtime's message as it
// wrote it) and returns the message and the cursor, which shares msg's
// memory: it is valid until msg is reused. A message without a cursor is
// returned as is, with a nil cursor.
func StripCursor(msg []byte) (out, cursor []byte) {
	const whole = `"_meta":{"` + CursorKey + `":"`
	const key = `"` + CursorKey + `":"`
	i := bytes.Index(msg, []byte(key))
	if i < 0 {
		return msg, nil
	}
	start := i + len(key)
	j := bytes.IndexByte(msg[start:], '"')
	if j < 0 {
		return msg, nil
	}
	end := start + j + 1 // after the closing quote
	var cur [20]byte
	n := copy(cur[:], msg[start:end-1])
	from, to := i, end
	if i >= len(whole)-len(key) && string(msg[i-(len(whole)-len(key)):i]) == whole[:len(whole)-len(key)] &&
		end < len(msg) && msg[end] == '}' {
		// "_meta":{"acp/cursor":"N"} that AddCursor made: all of it, and
		// the comma after it.
		from, to = i-(len(whole)-len(key)), end+1
		if to < len(msg) && msg[to] == ',' {
			to++
		}
	} else if end < len(msg) && msg[end] == ',' {
		to = end + 1 // "acp/cursor":"N", first in the runtime's _meta
	}
	out = append(msg[:from], msg[to:]...)
	// The cursor is put after the message, in msg's spare room.
	if cap(msg)-len(out) >= n {
		c := msg[len(out) : len(out)+n]
		copy(c, cur[:n])
		return out, c
	}
	return out, append([]byte(nil), cur[:n]...)
}
