package acpwire

import "encoding/json"

// MethodSessionSteering is the steering extension's request: a message
// injected into the turn that is running (docs/behaviour.md#steering).
const MethodSessionSteering = "_session/steering"

// SteerIdlePromptRequired is the steering idleBehavior that asks the
// runtime to leave the message unused when no turn runs, instead of
// starting a turn of its own.
const SteerIdlePromptRequired = "promptRequired"

// Steering outcomes the runtime answers.
const (
	// SteerOutcomeInjected: the message joined the running turn.
	SteerOutcomeInjected = "injected"
	// SteerOutcomePromptRequired: no turn could take it; nothing was used.
	SteerOutcomePromptRequired = "promptRequired"
)

// SteerRequest is the params of _session/steering.
type SteerRequest struct {
	SessionID string         `json:"sessionId"`
	Prompt    []TextBlock    `json:"prompt"`
	Meta      *SteerMetaWrap `json:"_meta,omitempty"`
}

// TextBlock is one text content block.
type TextBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// SteerMetaWrap is the request's _meta.
type SteerMetaWrap struct {
	Steering SteerMeta `json:"steering"`
}

// SteerMeta is _meta.steering of a request.
type SteerMeta struct {
	IdleBehavior string `json:"idleBehavior,omitempty"`
}

// SteerResponse is the result of _session/steering.
type SteerResponse struct {
	Outcome string `json:"outcome"`
	Reason  string `json:"reason,omitempty"`
}

// NewSteerRequest is the request that steers sessionID's running turn with
// text, asking the runtime to start nothing when no turn runs.
func NewSteerRequest(sessionID, text string) SteerRequest {
	return SteerRequest{
		SessionID: sessionID,
		Prompt:    []TextBlock{{Type: "text", Text: text}},
		Meta:      &SteerMetaWrap{Steering: SteerMeta{IdleBehavior: SteerIdlePromptRequired}},
	}
}

// SteeringAdvertised reports whether an initialize _meta (the result's own,
// or agentCapabilities') carries steering.supported = true.
func SteeringAdvertised(metas ...json.RawMessage) bool {
	for _, raw := range metas {
		var m struct {
			Steering *struct {
				Supported bool `json:"supported"`
			} `json:"steering"`
		}
		if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
			continue
		}
		if m.Steering != nil && m.Steering.Supported {
			return true
		}
	}
	return false
}
