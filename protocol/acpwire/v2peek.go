package acpwire

import "bytes"

var sessionUpdateKey = []byte(`"sessionUpdate"`)

// PeekUpdateKind returns the sessionUpdate discriminator of a
// session/update's params without decoding them, "" when it finds none.
// It reads the first "sessionUpdate" key, so a v2 session can route
// state_update and the kinds v2 adds without a second decode of every
// chunk.
func PeekUpdateKind(params []byte) string {
	i := bytes.Index(params, sessionUpdateKey)
	if i < 0 {
		return ""
	}
	rest := bytes.TrimLeft(params[i+len(sessionUpdateKey):], " \t\r\n")
	if len(rest) == 0 || rest[0] != ':' {
		return ""
	}
	rest = bytes.TrimLeft(rest[1:], " \t\r\n")
	if len(rest) == 0 || rest[0] != '"' {
		return ""
	}
	end := bytes.IndexByte(rest[1:], '"')
	if end < 0 {
		return ""
	}
	return string(rest[1 : 1+end])
}
