package acpwire

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
