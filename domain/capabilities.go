package domain

import (
	"encoding/json"
	"strings"
)

// CapabilityState is how a capability is delivered: by the protocol, by
// this client's own means, or not at all. States order protocol > ours >
// gap, and a session only ever lowers them.
type CapabilityState string

// Capability states.
const (
	// CapProtocol: the transport delivers the capability.
	CapProtocol CapabilityState = "protocol"
	// CapOurs: this client delivers it by its own means (a measurement source).
	CapOurs CapabilityState = "ours"
	// CapGap: the capability is not delivered.
	CapGap CapabilityState = "gap"
)

// CapabilityLabel names one of the four tracked capabilities; the values
// are contract strings.
type CapabilityLabel string

// Capability labels.
const (
	// CapToolServers: declared MCP tool servers reach the runtime.
	CapToolServers CapabilityLabel = "tool servers"
	// CapTokenCounts: per-turn token figures are measured.
	CapTokenCounts CapabilityLabel = "token counts"
	// CapSessionContinuation: a saved session can be continued.
	CapSessionContinuation CapabilityLabel = "session continuation"
	// CapAgentVersion: the runtime identifies itself and its version.
	CapAgentVersion CapabilityLabel = "agent version"
)

// capabilityOrder is the fixed order, private so callers cannot reorder it.
var capabilityOrder = [...]CapabilityLabel{
	CapToolServers, CapTokenCounts, CapSessionContinuation, CapAgentVersion,
}

// CapabilityOrder lists the capability labels in their fixed order. It is
// a copy: this package never reads it, so changing it changes nothing here.
var CapabilityOrder = append([]CapabilityLabel(nil), capabilityOrder[:]...)

// MsgCapabilityGapNotice is the start of the once-per-session notice; the
// labels in the gap state follow, joined by ", ".
const MsgCapabilityGapNotice = "this session started with a declared capability gap in: "

// MsgCapabilityLoweredLate is the Warn log text for a capability lowered
// after the notice went out (logged with capability=<label>).
const MsgCapabilityLoweredLate = "capability lowered after the once-per-session notice"

// capLevel encodes a state so that the zero value is CapProtocol and a
// larger level is lower.
type capLevel uint8

const (
	levelProtocol capLevel = iota
	levelOurs
	levelGap
)

func (l capLevel) state() CapabilityState {
	switch l {
	case levelProtocol:
		return CapProtocol
	case levelOurs:
		return CapOurs
	default:
		return CapGap
	}
}

// Capabilities is a session's capability record: four entries, each only
// ever lowered. It is a value type; the zero value has every entry at
// CapProtocol.
type Capabilities struct {
	levels    [len(capabilityOrder)]capLevel
	confirmed [len(capabilityOrder)]bool
}

// capIndex returns the position of label in the fixed order.
func capIndex(label CapabilityLabel) (int, bool) {
	for i, l := range capabilityOrder {
		if l == label {
			return i, true
		}
	}
	return 0, false
}

// NewCapabilities returns the record a session starts with: tool servers
// delivered unless the launch is remote (then gap); token counts ours when a
// measurement source claimed the launch, gap otherwise; session
// continuation and agent version delivered.
func NewCapabilities(remote bool, measured bool) Capabilities {
	var c Capabilities
	if remote {
		c.levels[0] = levelGap
	}
	if measured {
		c.levels[1] = levelOurs
	} else {
		c.levels[1] = levelGap
	}
	return c
}

// Lower sets the entry to gap and reports whether it changed. It never
// raises an entry; an unknown label changes nothing.
func (c *Capabilities) Lower(label CapabilityLabel) (changed bool) {
	i, ok := capIndex(label)
	if !ok || c.levels[i] == levelGap {
		return false
	}
	c.levels[i] = levelGap
	c.confirmed[i] = false
	return true
}

// MeasuredByProtocol sets token counts to CapProtocol: a turn's end
// carried its usage on the wire (docs/behaviour.md#token-accounting). It
// is the one entry a record raises, since what the protocol delivers is
// learnt only when a turn ends.
func (c *Capabilities) MeasuredByProtocol() {
	i, _ := capIndex(CapTokenCounts)
	c.levels[i] = levelProtocol
}

// Confirm records that the entry was observed to work, not only assumed
// (the tool-server confirmation, docs/behaviour.md#tool-server-confirmation),
// and reports whether it did. An entry at gap cannot be confirmed; lowering
// an entry clears its confirmation.
func (c *Capabilities) Confirm(label CapabilityLabel) bool {
	i, ok := capIndex(label)
	if !ok || c.levels[i] == levelGap {
		return false
	}
	c.confirmed[i] = true
	return true
}

// Confirmed reports whether the entry was confirmed (see Confirm).
func (c Capabilities) Confirmed(label CapabilityLabel) bool {
	i, ok := capIndex(label)
	return ok && c.confirmed[i]
}

// State returns the entry's state, or "" for an unknown label.
func (c Capabilities) State(label CapabilityLabel) CapabilityState {
	i, ok := capIndex(label)
	if !ok {
		return ""
	}
	return c.levels[i].state()
}

// Gaps returns the labels in the gap state, in the fixed order; nil when
// there are none.
func (c Capabilities) Gaps() []CapabilityLabel {
	var gaps []CapabilityLabel
	for i, l := range capabilityOrder {
		if c.levels[i] == levelGap {
			gaps = append(gaps, l)
		}
	}
	return gaps
}

// Notice returns the once-per-session notice naming every entry in the gap
// state, and false when no gap exists.
func (c Capabilities) Notice() (string, bool) {
	gaps := c.Gaps()
	if len(gaps) == 0 {
		return "", false
	}
	names := make([]string, len(gaps))
	for i, g := range gaps {
		names[i] = string(g)
	}
	return MsgCapabilityGapNotice + strings.Join(names, ", "), true
}

// capabilityEntry is the JSON shape of one entry.
type capabilityEntry struct {
	Label     CapabilityLabel `json:"label"`
	State     CapabilityState `json:"state"`
	Confirmed bool            `json:"confirmed,omitempty"`
}

// MarshalJSON encodes the record as [{"label":...,"state":...}, ...] in the
// fixed order; a confirmed entry carries "confirmed":true.
func (c Capabilities) MarshalJSON() ([]byte, error) {
	entries := make([]capabilityEntry, len(capabilityOrder))
	for i, l := range capabilityOrder {
		entries[i] = capabilityEntry{Label: l, State: c.levels[i].state(), Confirmed: c.confirmed[i]}
	}
	return json.Marshal(entries)
}

// String prints the record one entry per line, in the fixed order:
// "<label>: <state>", followed by " (confirmed)" for a confirmed entry.
// fmt.Print(sess.Capabilities()) prints it.
func (c Capabilities) String() string {
	var b strings.Builder
	for i, l := range capabilityOrder {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(string(l) + ": " + string(c.levels[i].state()))
		if c.confirmed[i] {
			b.WriteString(" (confirmed)")
		}
	}
	return b.String()
}
