package acpwire

import "encoding/json"

// CodeUnsupportedProtocolVersion is the JSON-RPC error code an agent
// answers initialize with when it does not speak the protocol version the
// client asked for; its data names the versions it does speak.
const CodeUnsupportedProtocolVersion = -32022

// versionErrorData is the data of an unsupported-version error:
// {"requested":1,"supported":[2]}.
type versionErrorData struct {
	Supported []int `json:"supported"`
}

// SupportedVersions reads the protocol versions an initialize error's data
// names ("supported"); ok is false when the data names none.
func SupportedVersions(data json.RawMessage) (versions []int, ok bool) {
	var d versionErrorData
	if len(data) == 0 || json.Unmarshal(data, &d) != nil || len(d.Supported) == 0 {
		return nil, false
	}
	return d.Supported, true
}
