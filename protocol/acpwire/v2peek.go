package acpwire

import "bytes"

var sessionUpdateKey = []byte(`"sessionUpdate"`)

// PeekUpdateKind returns the sessionUpdate discriminator of a
// session/update's params without decoding or copying them (a slice of
// params), nil when it finds none. It reads the first "sessionUpdate"
// key, so a v2 session can route state_update and the kinds v2 adds
// without a second decode, or an allocation, per chunk.
func PeekUpdateKind(params []byte) []byte {
	i := bytes.Index(params, sessionUpdateKey)
	if i < 0 {
		return nil
	}
	rest := bytes.TrimLeft(params[i+len(sessionUpdateKey):], " \t\r\n")
	if len(rest) == 0 || rest[0] != ':' {
		return nil
	}
	rest = bytes.TrimLeft(rest[1:], " \t\r\n")
	if len(rest) == 0 || rest[0] != '"' {
		return nil
	}
	end := bytes.IndexByte(rest[1:], '"')
	if end < 0 {
		return nil
	}
	return rest[1 : 1+end]
}
