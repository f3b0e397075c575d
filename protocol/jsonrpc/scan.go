package jsonrpc

import (
	"encoding/binary"
	"math/bits"
	"strconv"
)

// This file holds a small validating JSON scanner. It accepts exactly what
// encoding/json's Valid accepts (checked by a differential fuzz test) but only
// walks the bytes: it records where values start and end instead of decoding
// them, so classifying an envelope costs one pass and no allocation.

// maxDepth is encoding/json's nesting limit, mirrored so that both agree.
const maxDepth = 10000

// syntaxError describes invalid JSON at a byte offset of the line.
type syntaxError struct {
	off int
	msg string
}

func (e *syntaxError) Error() string {
	return "invalid JSON at offset " + strconv.Itoa(e.off) + ": " + e.msg
}

func errAt(off int, msg string) error { return &syntaxError{off: off, msg: msg} }

// skipSpace returns the index of the first non-whitespace byte at or after i.
func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// validJSON reports whether b is one valid JSON value, optionally surrounded
// by whitespace.
func validJSON(b []byte) bool {
	i := skipSpace(b, 0)
	i, err := skipValue(b, i, 0)
	if err != nil {
		return false
	}
	return skipSpace(b, i) == len(b)
}

// skipValue validates the JSON value starting at b[i] (no leading whitespace)
// and returns the index just past it. depth is the nesting depth of the
// enclosing container (0 at top level).
func skipValue(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return i, errAt(i, "unexpected end of input")
	}
	switch c := b[i]; c {
	case '"':
		return skipString(b, i)
	case '{':
		return skipObject(b, i, depth+1)
	case '[':
		return skipArray(b, i, depth+1)
	case 't':
		return skipLiteral(b, i, "true")
	case 'f':
		return skipLiteral(b, i, "false")
	case 'n':
		return skipLiteral(b, i, "null")
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return skipNumber(b, i)
	}
	return i, errAt(i, "invalid character")
}

func skipLiteral(b []byte, i int, lit string) (int, error) {
	if len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit {
		return i + len(lit), nil
	}
	return i, errAt(i, "invalid literal")
}

// skipNumber validates -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at b[i].
func skipNumber(b []byte, i int) (int, error) {
	start := i
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = skipDigits(b, i+1)
	default:
		return i, errAt(start, "invalid number")
	}
	if i < len(b) && b[i] == '.' {
		j := skipDigits(b, i+1)
		if j == i+1 {
			return j, errAt(start, "invalid number")
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := skipDigits(b, i)
		if j == i {
			return j, errAt(start, "invalid number")
		}
		i = j
	}
	return i, nil
}

func skipDigits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// SWAR constants: a byte broadcast across a 64-bit word.
const (
	lsb    = 0x0101010101010101
	msb    = 0x8080808080808080
	quotes = '"' * lsb
	slashs = '\\' * lsb
)

// attention returns a mask whose lowest set bit marks the first byte of the
// little-endian word w that is a quote, a backslash, or a control byte
// (< 0x20); it is zero when there is none. (Bits above the first marked byte
// may be spurious because of borrows; only the lowest one is used.)
func attention(w uint64) uint64 {
	q := w ^ quotes
	s := w ^ slashs
	return ((q-lsb)&^q | (s-lsb)&^s | (w-0x20*lsb)&^w) & msb
}

// nextSpecial returns the index of the first quote, backslash or control
// byte at or after i, or len(b).
func nextSpecial(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		if m := attention(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return i
}

// skipString validates the string literal starting at the quote b[i] and
// returns the index just past its closing quote.
func skipString(b []byte, i int) (int, error) {
	start := i
	for {
		i = nextSpecial(b, i+1)
		if i >= len(b) {
			return i, errAt(start, "unterminated string")
		}
		switch b[i] {
		case '"':
			return i + 1, nil
		case '\\':
			if i+1 >= len(b) {
				return i, errAt(start, "unterminated string")
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++ // the loop steps over the escaped byte
			case 'u':
				if len(b)-i < 6 || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return i, errAt(i, "invalid unicode escape")
				}
				i += 5
			default:
				return i, errAt(i, "invalid escape")
			}
		default:
			return i, errAt(i, "control character in string")
		}
	}
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// skipObject validates the object starting at b[i] == '{'.
func skipObject(b []byte, i, depth int) (int, error) {
	if depth > maxDepth {
		return i, errAt(i, "nesting too deep")
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return i, errAt(i, "expected object key")
		}
		var err error
		if i, err = skipString(b, i); err != nil {
			return i, err
		}
		i = skipSpace(b, i)
		if i >= len(b) || b[i] != ':' {
			return i, errAt(i, "expected ':' after object key")
		}
		i = skipSpace(b, i+1)
		if i, err = skipValue(b, i, depth); err != nil {
			return i, err
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return i, errAt(i, "unterminated object")
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return i + 1, nil
		default:
			return i, errAt(i, "expected ',' or '}' in object")
		}
	}
}

// skipArray validates the array starting at b[i] == '['.
func skipArray(b []byte, i, depth int) (int, error) {
	if depth > maxDepth {
		return i, errAt(i, "nesting too deep")
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, nil
	}
	for {
		var err error
		if i, err = skipValue(b, i, depth); err != nil {
			return i, err
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return i, errAt(i, "unterminated array")
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case ']':
			return i + 1, nil
		default:
			return i, errAt(i, "expected ',' or ']' in array")
		}
	}
}
