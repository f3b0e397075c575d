package app_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/refagent"
)

func withSubagents() option { return func(o *app.Options) { o.Settings.Subagents = true } }

// ofSession keeps the events of session id (a child's), in order.
func ofSession(evs []domain.Event, id string) []domain.Event {
	var out []domain.Event
	for _, ev := range evs {
		if ev.SessionID == id && ev.Type != domain.EventSessionStarted {
			out = append(out, ev)
		}
	}
	return out
}

// TestChildSessionEvents: with Subagents, initialize declares the
// capability; the child is announced with its labels, every event of its
// own carries its id and its parent's (its message, its tool call, its
// context use), its state change is reported, and the parent's reply stays
// the parent's alone.
func TestChildSessionEvents(t *testing.T) {
	t.Parallel()
	h := start(t, nil, withSubagents())
	res := h.turn("#subagent")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	init := received(t, h.agentLg, "initialize")
	require.Len(t, init, 1)
	assert.Equal(t, map[string]any{}, loggedParams(t, init[0])["clientCapabilities"].(map[string]any)["subagents"])

	child := ofSession(h.rec.All(), refagent.ChildSessionID)
	var types []string
	for _, ev := range child {
		assert.Equal(t, "ref-1", ev.ParentSessionID, "%s names the parent", ev.Type)
		types = append(types, string(ev.Type)+":"+ev.Message)
	}
	assert.Equal(t, []string{
		"child_started:Explore the repository",
		"message_chunk:The child looked around.",
		"notification:The child looked around.",
		"tool_result:ls",
		"context_usage:1200 of 200000 context tokens (0.6%)",
		"child_state:idle (end_turn)",
	}, types)
	assert.Equal(t, &domain.ChildInfo{Title: "Explore the repository", Description: "general-purpose", State: "running"}, child[0].Child)
	assert.Equal(t, &domain.ChildInfo{Title: "Explore the repository", Description: "general-purpose", State: "idle", StopReason: "end_turn"}, child[len(child)-1].Child)

	assert.Equal(t, "The parent is done.", h.sess.LastMessage().Text, "the child's message is not the parent's")
	assert.NotContains(t, h.rec.Text(), "child looked", "the child's text is no reply text")
	assert.Empty(t, h.rec.OfType(domain.EventMalformed))
	for _, ev := range h.rec.All() {
		if ev.SessionID == "" {
			assert.Empty(t, ev.ParentSessionID)
		}
	}
	assert.Equal(t, []app.ChildSession{{ID: refagent.ChildSessionID, ParentID: "ref-1", CanCancel: true,
		ChildInfo: domain.ChildInfo{Title: "Explore the repository", Description: "general-purpose", State: "idle", StopReason: "end_turn"},
		Context:   &domain.ContextUsage{Used: 1200, Size: 200000}}},
		h.sess.Children())
	assert.Nil(t, res.Context, "the child's usage_update is not the parent's context use")
}

// TestChildSessionsNotDeclared: without Subagents nothing is declared, the
// child's updates are dropped as any foreign session's (as before), and the
// subagent_update is an unrecognized update on the parent.
func TestChildSessionsNotDeclared(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	res := h.turn("#subagent")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	init := received(t, h.agentLg, "initialize")
	require.Len(t, init, 1)
	assert.NotContains(t, loggedParams(t, init[0])["clientCapabilities"], "subagents")
	assert.Empty(t, ofSession(h.rec.All(), refagent.ChildSessionID))
	for _, ev := range h.rec.All() {
		assert.NotContains(t, ev.Message, "child looked")
		assert.Empty(t, ev.ParentSessionID)
	}
	assert.Len(t, h.rec.OfType(domain.EventMalformed), 2, "each subagent_update is an unrecognized kind")
	assert.Empty(t, h.rec.OfType(domain.EventToolResult), "the child's tool call is not the parent's")
	assert.Nil(t, h.sess.Children())
	assert.Contains(t, h.logs.String(), "dropped an update for another session")
}

// TestChildPermissionRefused: a child's permission request meets the
// parent's posture (reject_once selected), the notice is the child's, the
// child is ended with session/cancel naming it, and the parent's turn goes
// on to end_turn.
func TestChildPermissionRefused(t *testing.T) {
	t.Parallel()
	h := start(t, nil, withSubagents())
	res := h.turn("#subagent-permission")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.Contains(t, h.rec.Text(), "reject-once", "the child's request got the refusing option")
	var states, notices []string
	for _, ev := range ofSession(h.rec.All(), refagent.ChildSessionID) {
		switch ev.Type {
		case domain.EventChildState:
			states = append(states, ev.Message)
		case domain.EventNotification:
			notices = append(notices, ev.Message)
		}
	}
	assert.Equal(t, []string{"requires_action", "idle (cancelled)"}, states)
	assert.Equal(t, []string{domain.MsgPermissionRefused}, notices, "the refusal is the child's")
	h.waitReceived("session/cancel", 1)
	var cancels []string
	for _, r := range received(t, h.agentLg, "session/cancel") {
		cancels = append(cancels, loggedParams(t, r)["sessionId"].(string))
	}
	assert.Equal(t, []string{refagent.ChildSessionID}, cancels, "the child is ended, the parent is not cancelled")
	assert.Equal(t, "The parent goes on.", h.sess.LastMessage().Text)
}

// TestChildErrorState: a child whose work failed is reported idle with
// the stop reason error and the runtime's error text.
func TestChildErrorState(t *testing.T) {
	t.Parallel()
	h := start(t, nil, withSubagents())
	require.Equal(t, domain.OutcomeCompleted, h.turn("#subagent-error").Outcome)
	states := h.rec.OfType(domain.EventChildState)
	require.Len(t, states, 1)
	assert.Equal(t, "idle (error): the model is overloaded", states[0].Message)
	assert.Equal(t, "the model is overloaded", states[0].Child.Error)
	assert.Equal(t, "error", states[0].Child.StopReason)
}

// TestCancelParentCancelsChildren: cancelling the parent's turn sends
// session/cancel for the parent and for its working child.
func TestCancelParentCancelsChildren(t *testing.T) {
	t.Parallel()
	h := start(t, nil, withSubagents())
	ctx, cancel := context.WithCancel(context.Background())
	done := h.turnAsync(ctx, "#subagent-wait")
	waitEvent(t, h, domain.EventChildStarted)
	cancel()
	res := <-done
	assert.Equal(t, domain.OutcomeCancelled, res.Outcome)
	// The child's cancel follows the parent's on the wire; the agent may
	// answer the prompt before it reads it.
	h.waitReceived("session/cancel", 2)
	var cancels []string
	for _, r := range received(t, h.agentLg, "session/cancel") {
		cancels = append(cancels, loggedParams(t, r)["sessionId"].(string))
	}
	assert.Contains(t, cancels, "ref-1")
	assert.Contains(t, cancels, refagent.ChildSessionID, "the working child is cancelled with its parent")
}

// TestCancelChild: CancelChild names the child in session/cancel and the
// parent's turn goes on; an unknown child is refused with nothing sent.
func TestCancelChild(t *testing.T) {
	t.Parallel()
	h := start(t, nil, withSubagents())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := h.turnAsync(ctx, "#subagent-wait")
	waitEvent(t, h, domain.EventChildStarted)

	err := h.sess.CancelChild(context.Background(), "nobody")
	assert.ErrorIs(t, err, domain.KindResponseError)
	require.NoError(t, h.sess.CancelChild(context.Background(), refagent.ChildSessionID))
	h.waitReceived("session/cancel", 1)
	recs := received(t, h.agentLg, "session/cancel")
	require.Len(t, recs, 1)
	assert.Equal(t, refagent.ChildSessionID, loggedParams(t, recs[0])["sessionId"])
	select {
	case res := <-done:
		t.Fatalf("the parent's turn ended: %v", res.Message())
	default:
	}
	cancel()
	<-done
	assert.False(t, strings.Contains(h.rec.Text(), "Working."), "the child's text is no reply text")
}

// TestChildElicitation: a child's elicitation is answered -32601 as the
// parent's would be, but what only a person could give ends the child, not
// the parent's turn.
func TestChildElicitation(t *testing.T) {
	t.Parallel()
	h := start(t, script(t, "child-elicitation.json"), withSubagents())
	res := h.turn("go")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	var notices []string
	for _, ev := range ofSession(h.rec.All(), refagent.ChildSessionID) {
		if ev.Type == domain.EventNotification {
			notices = append(notices, ev.Message)
		}
	}
	assert.Equal(t, []string{domain.MsgElicitation}, notices)
	h.waitReceived("session/cancel", 1)
	recs := received(t, h.agentLg, "session/cancel")
	require.Len(t, recs, 1)
	assert.Equal(t, refagent.ChildSessionID, loggedParams(t, recs[0])["sessionId"])
	assert.Empty(t, h.rec.OfType(domain.EventTurnInputRequired))
}
