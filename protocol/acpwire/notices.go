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

// SessionFailureOffered is the clientCapabilities._meta that declares the
// session failure extension (JetBrains AIR's "sessionFailure", version 1),
// which the Claude agent adapter 0.101.0 and codex-acp 2.6.0 offer only
// to a client that declares it: typed failure records and retry warnings
// as session_info_update _meta, and a failed turn's record on its prompt
// response.
func SessionFailureOffered() json.RawMessage {
	return json.RawMessage(`{"jetbrains":{"air":{"version":1,"capabilities":["sessionFailure"]}}}`)
}
