package acpwire

import "encoding/json"

// Permission option kinds of ACP v1.
const (
	OptionAllowOnce    = "allow_once"
	OptionAllowAlways  = "allow_always"
	OptionRejectOnce   = "reject_once"
	OptionRejectAlways = "reject_always"
)

// PermissionOption is one choice a permission request offers.
type PermissionOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
}

// RequestPermissionRequest is the params of session/request_permission.
type RequestPermissionRequest struct {
	SessionID string             `json:"sessionId"`
	ToolCall  *ToolCall          `json:"toolCall,omitempty"`
	Options   []PermissionOption `json:"options"`
}

// PermissionOutcome is the outcome object of a permission answer.
type PermissionOutcome struct {
	Outcome  string `json:"outcome"`
	OptionID string `json:"optionId,omitempty"`
}

// RequestPermissionResponse is the result of session/request_permission.
type RequestPermissionResponse struct {
	Outcome PermissionOutcome `json:"outcome"`
}

// Permission outcomes of ACP v1.
const (
	OutcomeSelected  = "selected"
	OutcomeCancelled = "cancelled"
)

// RefusingOption returns the option an unattended client answers with: the
// first reject_once, else the first reject_always. ok is false when the
// request offers no refusing option.
func RefusingOption(opts []PermissionOption) (PermissionOption, bool) {
	for _, want := range [...]string{OptionRejectOnce, OptionRejectAlways} {
		for _, o := range opts {
			if o.Kind == want {
				return o, true
			}
		}
	}
	return PermissionOption{}, false
}

// SelectedAnswer answers a permission request with optionID.
func SelectedAnswer(optionID string) RequestPermissionResponse {
	return RequestPermissionResponse{Outcome: PermissionOutcome{Outcome: OutcomeSelected, OptionID: optionID}}
}

// CancelledAnswer answers a permission request with the cancelled outcome.
func CancelledAnswer() RequestPermissionResponse {
	return RequestPermissionResponse{Outcome: PermissionOutcome{Outcome: OutcomeCancelled}}
}

// PermissionDetail is what a permission request tells of the tool call
// beyond its identity: where it acts and with what input. Each part is
// decoded on its own, so a malformed part leaves the rest readable.
type PermissionDetail struct {
	// ToolCallID, Title and Kind are the tool call's, "" when absent or
	// not strings.
	ToolCallID, Title, Kind string
	// Locations are the raw entries of toolCall.locations.
	Locations []json.RawMessage
	// RawInput is toolCall.rawInput verbatim.
	RawInput json.RawMessage
}

// DecodePermissionDetail reads the toolCall of session/request_permission
// params leniently: a part of the wrong type is left empty.
func DecodePermissionDetail(params json.RawMessage) PermissionDetail {
	var p struct {
		ToolCall map[string]json.RawMessage `json:"toolCall"`
	}
	var d PermissionDetail
	if json.Unmarshal(params, &p) != nil || p.ToolCall == nil {
		return d
	}
	str := func(key string) string {
		var s string
		_ = json.Unmarshal(p.ToolCall[key], &s)
		return s
	}
	d.ToolCallID, d.Title, d.Kind = str("toolCallId"), str("title"), str("kind")
	if raw, ok := p.ToolCall["locations"]; ok {
		if json.Unmarshal(raw, &d.Locations) != nil && string(raw) != "null" {
			// locations present but not a list: one location that
			// cannot be read.
			d.Locations = []json.RawMessage{json.RawMessage("null")}
		}
	}
	d.RawInput = p.ToolCall["rawInput"]
	return d
}
