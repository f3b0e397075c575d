package domain

import "fmt"

// ProtocolChoice is the ACP version a session asks for (agent.protocol,
// --protocol; docs/behaviour.md#protocol-v2): "1", "2" or "auto". The
// empty choice is the default, "1", until ACP v2 is final.
type ProtocolChoice string

// The protocol choices.
const (
	// ProtocolV1 asks for ACP v1 and accepts only v1.
	ProtocolV1 ProtocolChoice = "1"
	// ProtocolV2 asks for ACP v2 and accepts only v2.
	ProtocolV2 ProtocolChoice = "2"
	// ProtocolAuto asks for ACP v2 and accepts what the runtime answers,
	// 1 or 2.
	ProtocolAuto ProtocolChoice = "auto"
)

// CheckProtocolInvalid is the configuration check of an agent.protocol
// that is none of 1, 2 and auto.
const CheckProtocolInvalid = "agent.protocol.invalid"

// ParseProtocolChoice reads a choice as written ("" is the default "1").
func ParseProtocolChoice(s string) (ProtocolChoice, error) {
	switch p := ProtocolChoice(s); p {
	case "", ProtocolV1:
		return ProtocolV1, nil
	case ProtocolV2, ProtocolAuto:
		return p, nil
	}
	return "", fmt.Errorf("protocol %q: want 1, 2 or auto", s)
}

// Requested is the version the initialize request names: 2 for "2" and
// "auto", 1 otherwise.
func (p ProtocolChoice) Requested() int {
	if p == ProtocolV2 || p == ProtocolAuto {
		return 2
	}
	return 1
}

// Accepts reports whether a runtime answering version v is driven under
// this choice.
func (p ProtocolChoice) Accepts(v int) bool {
	switch p {
	case ProtocolAuto:
		return v == 1 || v == 2
	case ProtocolV2:
		return v == 2
	}
	return v == 1
}

// Accepted lists the versions Accepts takes, for the operator's message.
func (p ProtocolChoice) Accepted() []int {
	switch p {
	case ProtocolAuto:
		return []int{1, 2}
	case ProtocolV2:
		return []int{2}
	}
	return []int{1}
}
