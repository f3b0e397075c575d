package app

import (
	"encoding/json"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
)

// hookV2Children makes the stream of a session that may speak v2 read its
// children's updates as its own (docs/behaviour.md#protocol-v2,
// #sessions-as-resources-and-child-sessions): on stands for "the runtime
// answered version 2"; parentKind is the parent's translation of the kinds
// v2 adds. Once on, a child's stream gets the same translation (its
// agent_message is its text, its state_update its work state), and
// without Settings.Subagents a subagent_update or session_message on the
// parent — part of v2's baseline, sent whether or not the client follows
// children — is logged at Debug and dropped: never malformed, never the
// parent's text.
func hookV2Children(s *eventStream, on func() bool, parentKind func(string, json.RawMessage) bool) {
	s.otherKind = func(kind string, params json.RawMessage) bool {
		if on() && s.kids == nil && (kind == acpwire.UpdateSubagent || kind == acpwire.UpdateSessionMessage) {
			s.log.Debug("dropped a child session's update: child sessions are not followed", "kind", kind)
			s.activity(s.clock.Now())
			return true
		}
		return parentKind(kind, params)
	}
	kids := s.kids
	s.childKind = func(ch *child) func(string, json.RawMessage) bool {
		return func(kind string, params json.RawMessage) bool {
			if !on() {
				return false
			}
			return v2ChildKind(kids, ch, kind, params)
		}
	}
}

// v2ChildKind reads one update of a kind v1 does not have under child
// ch's id: a state_update is the child's work state (child_state, as a
// subagent_update's state is), a kind v2 reshaped is rewritten into its v1
// counterpart and handed to the child's stream. false leaves the kind
// unrecognized.
func v2ChildKind(kids *children, ch *child, kind string, params json.RawMessage) bool {
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
	out, ok := acpwire.TranslateV2Update(kind, params)
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
