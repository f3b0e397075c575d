package domain

import "fmt"

// ProtocolChoice is the ACP version a session asks for (agent.protocol,
// --protocol; docs/behaviour.md#protocol-v2): a version number, or "auto".
// The empty choice is the default, "1", until ACP v2 is final. It is
// data: the negotiation over the dialects acpdrive speaks
// (protocol/dialect.Open) reads a number as "ask for that version and
// accept only it", and "auto" as "ask for the newest and accept each".
type ProtocolChoice string

// The protocol choices.
const (
	// ProtocolV1 asks for ACP v1 and accepts only v1.
	ProtocolV1 ProtocolChoice = "1"
	// ProtocolV2 asks for ACP v2 and accepts only v2.
	ProtocolV2 ProtocolChoice = "2"
	// ProtocolDefault is the choice of a session that names none.
	ProtocolDefault = ProtocolV1
	// ProtocolAuto asks for the newest version acpdrive speaks and
	// accepts each version it speaks.
	ProtocolAuto ProtocolChoice = "auto"
)

// CheckProtocolInvalid is the configuration check of an agent.protocol
// that is none of 1, 2 and auto.
const CheckProtocolInvalid = "agent.protocol.invalid"

// ParseProtocolChoice reads a choice as written ("" is the default "1").
func ParseProtocolChoice(s string) (ProtocolChoice, error) {
	switch p := ProtocolChoice(s); p {
	case "", ProtocolDefault:
		return ProtocolDefault, nil
	case ProtocolV2, ProtocolAuto:
		return p, nil
	}
	return "", fmt.Errorf("protocol %q: want 1, 2 or auto", s)
}
