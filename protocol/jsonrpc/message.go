package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"
)

// envelope holds the byte spans of the JSON-RPC members of one line. Every
// span aliases the line it was scanned from.
type envelope struct {
	version []byte // raw value of "jsonrpc", nil when absent
	id      []byte // raw value of "id", nil when absent
	method  []byte // raw value of "method", nil when absent
	params  []byte // raw value of "params", nil when absent
	result  []byte // raw value of "result", nil when absent
	err     []byte // raw value of "error", nil when absent
}

// scanEnvelope checks that line is one valid JSON object and records the raw
// values of the members JSON-RPC cares about. Other members are validated and
// skipped. Member names match exactly (after unescaping); when a member
// repeats, the last one wins, as with encoding/json.
func scanEnvelope(line []byte, env *envelope) error {
	i := skipSpace(line, 0)
	if i >= len(line) {
		return errAt(i, "empty line")
	}
	if line[i] != '{' {
		if _, err := skipValue(line, i, 0); err != nil {
			return err
		}
		return errNotObject
	}
	i = skipSpace(line, i+1)
	if i < len(line) && line[i] == '}' {
		i++
	} else {
		for {
			if i >= len(line) || line[i] != '"' {
				return errAt(i, "expected object key")
			}
			keyStart := i
			var err error
			if i, err = skipString(line, i); err != nil {
				return err
			}
			key := line[keyStart:i]
			i = skipSpace(line, i)
			if i >= len(line) || line[i] != ':' {
				return errAt(i, "expected ':' after object key")
			}
			i = skipSpace(line, i+1)
			valStart := i
			if i, err = skipValue(line, i, 1); err != nil {
				return err
			}
			env.set(key, line[valStart:i])
			i = skipSpace(line, i)
			if i >= len(line) {
				return errAt(i, "unterminated object")
			}
			if line[i] == '}' {
				i++
				break
			}
			if line[i] != ',' {
				return errAt(i, "expected ',' or '}' in object")
			}
			i = skipSpace(line, i+1)
		}
	}
	if skipSpace(line, i) != len(line) {
		return errAt(i, "data after the JSON object")
	}
	return nil
}

// set records val under the member named by the string literal key.
func (env *envelope) set(key, val []byte) {
	name := key[1 : len(key)-1]
	switch string(name) {
	case "jsonrpc":
		env.version = val
	case "id":
		env.id = val
	case "method":
		env.method = val
	case "params":
		env.params = val
	case "result":
		env.result = val
	case "error":
		env.err = val
	default:
		// Escaped member names are legal JSON ("m\u0065thod"); decode them
		// on this rare path and try again.
		if bytes.IndexByte(name, '\\') >= 0 {
			if s, err := decodeString(key); err == nil && !strings.Contains(s, "\\") {
				env.set([]byte(`"`+s+`"`), val)
			}
		}
	}
}

// Reasons reported to Handler.HandleMalformed for lines that are valid JSON
// but not JSON-RPC 2.0 messages. Syntax errors are reported as *syntaxError.
var (
	errNotObject       = errors.New("not a JSON object")
	errNoVersion       = errors.New(`missing "jsonrpc" member`)
	errBadVersion      = errors.New(`"jsonrpc" is not "2.0"`)
	errMethodNotString = errors.New(`"method" is not a string`)
	errNoMethodOrID    = errors.New(`neither "method" nor "id" present`)
	errNoResultOrError = errors.New(`response has neither "result" nor "error"`)
	errResultAndError  = errors.New(`response has both "result" and "error"`)
	errBadErrorObject  = errors.New(`"error" is not an error object with an integer "code"`)
)

// malformedError wraps the reason a line is not JSON-RPC.
type malformedError struct{ reason error }

func (e *malformedError) Error() string { return "jsonrpc: malformed message: " + e.reason.Error() }
func (e *malformedError) Unwrap() error { return e.reason }

// kind is the classification of a well-formed envelope.
type kind uint8

const (
	kindNotification kind = iota + 1
	kindRequest
	kindResponse
	// kindAmbiguousResponse is a response with both a non-null "result"
	// and a non-null "error"; whether it is malformed depends on whether a
	// call waits for its id.
	kindAmbiguousResponse
)

// decode scans line into env and classifies it.
func (env *envelope) decode(line []byte) (kind, error) {
	if err := scanEnvelope(line, env); err != nil {
		return 0, err
	}
	return env.classify()
}

// classify applies the JSON-RPC 2.0 rules to a scanned envelope.
func (env *envelope) classify() (kind, error) {
	switch {
	case env.version == nil:
		return 0, errNoVersion
	case string(env.version) != `"2.0"`:
		if s, err := decodeString(env.version); err != nil || s != "2.0" {
			return 0, errBadVersion
		}
	}
	if env.id != nil && !validID(env.id) {
		return 0, errBadID
	}
	if env.method != nil {
		if env.method[0] != '"' {
			return 0, errMethodNotString
		}
		if env.id != nil {
			return kindRequest, nil
		}
		return kindNotification, nil
	}
	if env.id == nil {
		return 0, errNoMethodOrID
	}
	// A null "error" next to a result is a common lenient encoding; treat it
	// as absent.
	if env.err != nil && string(env.err) == "null" {
		env.err = nil
	}
	switch {
	case env.err != nil && env.result != nil && string(env.result) != "null":
		return kindAmbiguousResponse, nil
	case env.err != nil:
		env.result = nil
	case env.result == nil:
		return 0, errNoResultOrError
	}
	return kindResponse, nil
}

// validID reports whether raw (an already validated JSON value) is a valid
// id: null, a string, or a number. JSON-RPC 2.0 allows any number; one with
// a fraction or an exponent is only discouraged, so a request carrying one is
// a request like any other and is answered with that id.
func validID(raw []byte) bool {
	switch c := raw[0]; {
	case c == 'n', c == '"', c == '-', c >= '0' && c <= '9':
		return true
	}
	return false
}

// wireError is the decoding shape of an error object.
type wireError struct {
	Code    *int64          `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// decodeError decodes a response's error object into a fresh *Error.
func decodeError(raw []byte) (*Error, error) {
	if raw[0] != '{' {
		return nil, errBadErrorObject
	}
	var w wireError
	if err := json.Unmarshal(raw, &w); err != nil || w.Code == nil {
		return nil, errBadErrorObject
	}
	e := &Error{Code: *w.Code, Message: w.Message}
	if len(w.Data) > 0 && string(w.Data) != "null" {
		e.Data = w.Data
	}
	return e, nil
}

// Encoding.

// appendValue appends the compact JSON encoding of v to dst. A
// json.RawMessage is validated and compacted (so it cannot break the line
// framing); anything else goes through json.Marshal.
func appendValue(dst []byte, v any) ([]byte, error) {
	if raw, ok := v.(json.RawMessage); ok {
		if raw == nil {
			return append(dst, "null"...), nil
		}
		buf := bytes.NewBuffer(dst)
		if err := json.Compact(buf, raw); err != nil {
			return dst, err
		}
		return buf.Bytes(), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string literal. Invalid UTF-8 becomes
// U+FFFD, and U+2028/U+2029 are escaped, as encoding/json does; HTML
// characters are left alone.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
