package acpwire

import (
	"encoding/binary"
	"unicode/utf8"
)

// This file holds the hand-written fast path of DecodeSessionUpdate for the
// three *_chunk variants, the bulk of every stream. It accepts only the
// plain shape
//
//	{"sessionId":"…","update":{"sessionUpdate":"…","messageId":"…","content":{"type":"…","text":"…"}}}
//
// (keys in any order, each at most once, whitespace anywhere JSON allows it,
// "messageId" and "text" optional, strings of valid UTF-8 with the common
// backslash escapes but no \u escape), and gives exactly what encoding/json
// gives for it. Anything else (another key, a repeated key, a null, a \u
// escape, invalid UTF-8, invalid JSON) makes it report false, and the caller
// takes the encoding/json path, so behaviour never depends on which path
// decoded a line (a differential fuzz test checks this).

// chunkScanner walks one params value.
type chunkScanner struct {
	b   []byte
	i   int
	buf []byte // scratch for unescaping
}

// scanChunk decodes params as a *_chunk session/update when it has the
// plain shape; ok is false otherwise.
func scanChunk(params []byte) (sessionID string, u Update, ok bool) {
	sid, kind, c, ok := ScanChunk(params)
	if !ok {
		return "", Update{}, false
	}
	return sid, Update{Kind: kind, Known: true, Chunk: &c}, true
}

// ScanChunk is the fast path of DecodeSessionUpdate on its own: params of
// the plain shape of a *_chunk session/update give the session, the kind
// (one of the three constants) and the chunk as a value, with nothing
// allocated beyond its strings; ok is false for any other shape (decode it
// with DecodeSessionUpdate).
func ScanChunk(params []byte) (sessionID, chunkKind string, c ContentChunk, ok bool) {
	s := chunkScanner{b: params}
	var (
		sid, kind, msgID, ctype, text   []byte
		haveSID, haveUpdate, haveKind   bool
		haveMsg, haveContent, haveType  bool
		haveText                        bool
		sidEsc, msgEsc, typeEsc, txtEsc bool
	)
	okObj := s.object(func(key []byte) bool {
		switch string(key) {
		case "sessionId":
			if haveSID {
				return false
			}
			haveSID = true
			sid, sidEsc, ok = s.str()
			return ok
		case "update":
			if haveUpdate {
				return false
			}
			haveUpdate = true
			return s.object(func(key []byte) bool {
				switch string(key) {
				case "sessionUpdate":
					if haveKind {
						return false
					}
					haveKind = true
					var esc bool
					kind, esc, ok = s.str()
					return ok && !esc
				case "messageId":
					if haveMsg {
						return false
					}
					haveMsg = true
					msgID, msgEsc, ok = s.str()
					return ok
				case "content":
					if haveContent {
						return false
					}
					haveContent = true
					return s.object(func(key []byte) bool {
						switch string(key) {
						case "type":
							if haveType {
								return false
							}
							haveType = true
							ctype, typeEsc, ok = s.str()
							return ok
						case "text":
							if haveText {
								return false
							}
							haveText = true
							text, txtEsc, ok = s.str()
							return ok
						}
						return false
					})
				}
				return false
			})
		}
		return false
	})
	if !okObj || !haveKind || !haveContent {
		return "", "", ContentChunk{}, false
	}
	s.space()
	if s.i != len(s.b) {
		return "", "", ContentChunk{}, false
	}
	var k string
	switch string(kind) {
	case UpdateUserMessageChunk:
		k = UpdateUserMessageChunk
	case UpdateAgentMessageChunk:
		k = UpdateAgentMessageChunk
	case UpdateAgentThoughtChunk:
		k = UpdateAgentThoughtChunk
	default:
		return "", "", ContentChunk{}, false
	}
	c.MessageID = s.unquote(msgID, msgEsc)
	if !typeEsc && string(ctype) == "text" {
		c.Content.Type = "text"
	} else {
		c.Content.Type = s.unquote(ctype, typeEsc)
	}
	c.Content.Text = s.unquote(text, txtEsc)
	return s.unquote(sid, sidEsc), k, c, true
}

func (s *chunkScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// object walks an object, calling member after each key and its ':' with
// the scanner at the value; member must consume the value and report
// whether it was acceptable.
func (s *chunkScanner) object(member func(key []byte) bool) bool {
	s.space()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return false
	}
	s.i++
	s.space()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return true
	}
	for {
		s.space()
		key, esc, ok := s.str()
		if !ok || esc {
			return false
		}
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		s.space()
		if !member(key) {
			return false
		}
		s.space()
		if s.i >= len(s.b) {
			return false
		}
		switch s.b[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// str reads a string literal at the scanner and returns its raw contents
// (between the quotes) and whether it holds an escape. It refuses control
// bytes, \u escapes and invalid UTF-8.
func (s *chunkScanner) str() (raw []byte, escaped, ok bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false, false
	}
	start := s.i + 1
	ascii := true
	j := start
	// Eight bytes at a time past plain ASCII (no quote, backslash,
	// control byte or byte >= 0x80).
	for ; j+8 <= len(s.b); j += 8 {
		if special(binary.LittleEndian.Uint64(s.b[j:])) != 0 {
			break
		}
	}
	for ; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			raw = s.b[start:j]
			if !ascii && !utf8.Valid(raw) {
				return nil, false, false
			}
			s.i = j + 1
			return raw, escaped, true
		case c == '\\':
			if j+1 >= len(s.b) {
				return nil, false, false
			}
			switch s.b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				escaped = true
				j++
			default:
				return nil, false, false // \u and invalid escapes: the slow path
			}
		case c < 0x20:
			return nil, false, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false, false
}

// unquote turns the raw contents of a string literal accepted by str into
// the string.
func (s *chunkScanner) unquote(raw []byte, escaped bool) string {
	if !escaped {
		return string(raw)
	}
	s.buf = s.buf[:0]
	for j := 0; j < len(raw); j++ {
		c := raw[j]
		if c != '\\' {
			s.buf = append(s.buf, c)
			continue
		}
		j++
		switch raw[j] {
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		default: // '"', '\\', '/'
			c = raw[j]
		}
		s.buf = append(s.buf, c)
	}
	return string(s.buf)
}

// SWAR constants: a byte broadcast across a 64-bit word.
const (
	lsb    = 0x0101010101010101
	msb    = 0x8080808080808080
	quotes = '"' * lsb
	slashs = '\\' * lsb
)

// special is non-zero when the little-endian word w holds a quote, a
// backslash, a control byte (< 0x20) or a byte >= 0x80.
func special(w uint64) uint64 {
	q := w ^ quotes
	s := w ^ slashs
	return ((q-lsb)&^q | (s-lsb)&^s | (w - 0x20*lsb) | w) & msb
}
