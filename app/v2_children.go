package app

import (
	"encoding/json"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
)

// notFollowed takes, on a session that does not follow its children, the
// child traffic v2 sends as part of its baseline (docs/behaviour.md#protocol-v2,
// #sessions-as-resources-and-child-sessions): a subagent_update or a
// session_message is logged at Debug and dropped — never malformed, never
// the parent's text.
func (tr *v2Protocol) notFollowed(kind string) bool {
	if tr.stream.kids != nil || (kind != acpwire.UpdateSubagent && kind != acpwire.UpdateSessionMessage) {
		return false
	}
	tr.log.Debug("dropped a child session's update: child sessions are not followed", "kind", kind)
	tr.stream.activity(tr.clock.Now())
	return true
}

// childKind reads one update of a kind v1 does not have under child ch's
// id: a state_update is the child's work state (child_state, as a
// subagent_update's state is), a kind v2 reshaped is rewritten into its v1
// counterpart and handed to the child's stream. false leaves the kind
// unrecognized.
func (tr *v2Protocol) childKind(kids *children, ch *child, kind string, params json.RawMessage) bool {
	cs := ch.stream
	now := cs.clock.Now()
	if kind == acpwire.UpdateStateUpdate {
		_, su, _, err := acpwire.DecodeStateUpdate(params)
		if err != nil {
			cs.log.Debug("a child session sent a state_update without a state", "error", err)
			cs.other(domain.Event{Type: domain.EventMalformed, Message: msgV2StateMalformed})
			return true
		}
		st := &acpwire.SubagentState{State: su.State, StopReason: su.StopReason}
		if su.Error != nil {
			st.Error = &acpwire.SubagentError{Code: su.Error.Code, Message: su.Error.Message}
		}
		kids.ownState(ch, st, now)
		return true
	}
	out, ok := tr.rewrite(kind, params)
	if !ok {
		return false
	}
	if out == nil {
		cs.activity(now)
		return true
	}
	cs.update(out)
	return true
}
