package acpwire

import "encoding/json"

// ClientSessionCapabilities is clientCapabilities.session: object markers
// the client offers for a session. Notices, present and non-null, says the
// client presents `notice` updates; runtimes that honour it (the Claude
// agent adapter and codex-acp of today) send their warnings as `notice`
// instead of as agent text, and MUST NOT send `notice` without it.
type ClientSessionCapabilities struct {
	Notices json.RawMessage `json:"notices,omitempty"`
}

// NoticesOffered is the session capabilities acpdrive offers: the notices
// marker, an empty object.
func NoticesOffered() *ClientSessionCapabilities {
	return &ClientSessionCapabilities{Notices: json.RawMessage(`{}`)}
}
