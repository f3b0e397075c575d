package jsonrpc

import (
	"encoding/json"
	"errors"
	"strconv"
)

// idKind tells which of the three JSON-RPC id forms an ID holds.
type idKind uint8

const (
	idNull idKind = iota
	idNumber
	idString
)

// ID is a JSON-RPC request id: null, a number, or a string. It preserves the
// id exactly as the peer sent it, so that a reply echoes the same form: the
// string "0" and the number 0 are different ids, and a numeric id keeps its
// literal byte for byte, whether it is an integer outside the int64 range,
// -0, or a number with a fraction or an exponent (JSON-RPC 2.0 discourages
// those but allows them, and every request is answered; see
// docs/behaviour.md#permission-posture).
//
// The zero value is the null id. IDs are comparable with ==; two numeric ids
// are equal when their literals are (so IntID(0) equals a received 0, and
// neither equals a received -0 or 0.0).
type ID struct {
	kind idKind
	// text is the number's literal for a numeric id, the decoded value for
	// a string id, and empty for null.
	text string
}

// IntID returns the numeric id n.
func IntID(n int64) ID {
	return ID{kind: idNumber, text: strconv.FormatInt(n, 10)}
}

// StringID returns the string id s.
func StringID(s string) ID {
	return ID{kind: idString, text: s}
}

// IsNull reports whether id is the null id.
func (id ID) IsNull() bool { return id.kind == idNull }

// AsInt64 returns the numeric value of id. ok is false when id is not a
// number, is not written as an integer (2.5, 1e3), or does not fit in an
// int64.
func (id ID) AsInt64() (n int64, ok bool) {
	if id.kind != idNumber {
		return 0, false
	}
	return parseInt64([]byte(id.text))
}

// AsString returns the value of a string id. ok is false when id is not a
// string.
func (id ID) AsString() (s string, ok bool) {
	if id.kind != idString {
		return "", false
	}
	return id.text, true
}

// String returns the id in its JSON form: null, the number's literal as
// received, or a quoted string. It distinguishes "0" (quoted) from 0.
func (id ID) String() string {
	return string(id.appendJSON(nil))
}

// MarshalJSON encodes id in the form it was received or created with.
func (id ID) MarshalJSON() ([]byte, error) {
	return id.appendJSON(nil), nil
}

// UnmarshalJSON decodes null, a number (any JSON number, kept as written), or
// a string. Any other JSON value (a boolean, an object, an array) is an
// error.
func (id *ID) UnmarshalJSON(data []byte) error {
	got, err := parseID(trimSpace(data))
	if err != nil {
		return err
	}
	*id = got
	return nil
}

// appendJSON appends the JSON encoding of id to dst.
func (id ID) appendJSON(dst []byte) []byte {
	switch id.kind {
	case idNumber:
		return append(dst, id.text...)
	case idString:
		return appendJSONString(dst, id.text)
	default:
		return append(dst, "null"...)
	}
}

var errBadID = errors.New("id must be null, a number, or a string")

// parseID decodes a JSON id value (surrounding whitespace already removed).
func parseID(raw []byte) (ID, error) {
	if len(raw) == 0 {
		return ID{}, errBadID
	}
	switch c := raw[0]; {
	case c == 'n':
		if string(raw) == "null" {
			return ID{}, nil
		}
	case c == '"':
		s, err := decodeString(raw)
		if err != nil {
			return ID{}, errBadID
		}
		return ID{kind: idString, text: s}, nil
	case c == '-' || (c >= '0' && c <= '9'):
		if isNumberLiteral(raw) {
			return ID{kind: idNumber, text: string(raw)}, nil
		}
	}
	return ID{}, errBadID
}

// isNumberLiteral reports whether b is exactly one JSON number.
func isNumberLiteral(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	end, err := skipNumber(b, 0)
	return err == nil && end == len(b)
}

// isIntegerLiteral reports whether b is a JSON number without fraction or
// exponent: -?(0|[1-9][0-9]*).
func isIntegerLiteral(b []byte) bool {
	if len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	if len(b) == 0 {
		return false
	}
	if b[0] == '0' {
		return len(b) == 1
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// parseInt64 parses a JSON integer literal without allocating. ok is false
// for anything that is not an integer literal within the int64 range.
func parseInt64(b []byte) (n int64, ok bool) {
	if !isIntegerLiteral(b) {
		return 0, false
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) > 19 {
		return 0, false
	}
	var u uint64
	for _, c := range b {
		u = u*10 + uint64(c-'0') // at most 19 digits: no uint64 overflow
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return int64(-u), true
	}
	if u > 1<<63-1 {
		return 0, false
	}
	return int64(u), true
}

// decodeString decodes a complete JSON string literal (quotes included).
func decodeString(raw []byte) (string, error) {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		inner := raw[1 : len(raw)-1]
		if plainString(inner) {
			return string(inner), nil
		}
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", err
	}
	return s, nil
}

// plainString reports whether the body of a string literal needs no
// unescaping: no backslash, quote, control byte, or non-ASCII byte (the last so
// that invalid UTF-8 is replaced exactly as encoding/json would).
func plainString(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			return false
		}
	}
	return true
}

// trimSpace removes JSON whitespace from both ends of b.
func trimSpace(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && isSpace(b[i]) {
		i++
	}
	for j > i && isSpace(b[j-1]) {
		j--
	}
	return b[i:j]
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}
