package refagent

import "encoding/json"

// ChildSessionID is the id of the child session the subagent turns
// announce.
const ChildSessionID = "child-1"

// subagentUpdate is a subagent_update step (sent on the turn's session)
// about ChildSessionID: raw is the update's fields after the
// discriminator and the child's id.
func subagentUpdate(raw string) Step {
	return Step{Step: StepUpdate, Update: json.RawMessage(`{"sessionUpdate":"subagent_update","sessionId":"` + ChildSessionID + `"` + raw + `}`)}
}

// announceChild announces ChildSessionID as Claude's adapter does: title,
// description, the cancel capability, state running.
func announceChild() Step {
	return subagentUpdate(`,"title":"Explore the repository","description":"general-purpose","capabilities":{"cancel":{}},"state":{"state":"running"}`)
}

// childStep addresses st to ChildSessionID.
func childStep(st Step) Step {
	st.Session = ChildSessionID
	return st
}

// childTurns are the named turns that script a child session
// (docs/reference-agent.md#child-sessions).
func childTurns() map[string]*Turn {
	delegated := childStep(Step{Step: StepUpdate, Update: json.RawMessage(`{"sessionUpdate":"session_message","senderSessionId":"parent","recipientSessionId":"` + ChildSessionID + `","content":{"type":"text","text":"Explore the repository"}}`)})
	return map[string]*Turn{
		"subagent": {
			Description: "Announces child session child-1 (subagent_update: title, description, cancel, running); under child-1 a session_message, a text message (messageId c-1), an execute tool call that completes and a usage_update; then child-1 idle end_turn; the parent's own text (messageId p-1); end_turn.",
			Steps: []Step{
				{Step: StepText, Text: "Delegating.", MessageID: strPtr("p-0")},
				announceChild(),
				delegated,
				childStep(Step{Step: StepText, Text: "The child looked around.", MessageID: strPtr("c-1")}),
				childStep(Step{Step: StepToolCall, ToolCallID: "child-call", Title: "ls", Kind: "execute", Status: "in_progress"}),
				childStep(Step{Step: StepToolCallUpdate, ToolCallID: "child-call", Status: "completed"}),
				childStep(Step{Step: StepUsage, Used: 1200, Size: 200000}),
				subagentUpdate(`,"state":{"state":"idle","stopReason":"end_turn"}`),
				{Step: StepText, Text: "The parent is done.", MessageID: strPtr("p-1")},
				stop("end_turn"),
			},
		},
		"subagent-permission": {
			Description: "Announces child-1, reports it requires_action, sends a session/request_permission under child-1 (edit, all four options) and reports the outcome as the parent's text; then waits 300 ms for a session/cancel naming child-1 and reports child-1 idle cancelled; the parent's own text (messageId p-1); end_turn.",
			Steps: []Step{
				announceChild(),
				subagentUpdate(`,"state":{"state":"requires_action"}`),
				childStep(Step{Step: StepPermission, ToolCallID: "child-edit", Title: "Write notes.txt", Kind: "edit", Report: true}),
				{Step: StepSleep, Ms: 300},
				subagentUpdate(`,"state":{"state":"idle","stopReason":"cancelled"}`),
				{Step: StepText, Text: "The parent goes on.", MessageID: strPtr("p-1")},
				stop("end_turn"),
			},
		},
		"subagent-error": {
			Description: "Announces child-1; its work fails: idle, stopReason error, error {code -32603, message \"the model is overloaded\"}; the parent's own text; end_turn.",
			Steps: []Step{
				announceChild(),
				subagentUpdate(`,"state":{"state":"idle","stopReason":"error","error":{"code":-32603,"message":"the model is overloaded"}}`),
				{Step: StepText, Text: "The child failed.", MessageID: strPtr("p-1")},
				stop("end_turn"),
			},
		},
		"subagent-usage": {
			Description: "The parent's usage_update (600 of 100000, cost 0.30 USD); announces child-1; under child-1 a usage_update (1200 of 200000, cost 2.00 USD); child-1 idle end_turn; the parent's own text (messageId p-1); end_turn.",
			Steps: []Step{
				{Step: StepUsage, Used: 600, Size: 100000, Cost: json.RawMessage(`{"amount":0.3,"currency":"USD"}`)},
				announceChild(),
				childStep(Step{Step: StepUsage, Used: 1200, Size: 200000, Cost: json.RawMessage(`{"amount":2,"currency":"USD"}`)}),
				subagentUpdate(`,"state":{"state":"idle","stopReason":"end_turn"}`),
				{Step: StepText, Text: "The parent is done.", MessageID: strPtr("p-1")},
				stop("end_turn"),
			},
		},
		"subagent-last-text": {
			Description: "Announces child-1; under child-1 a text (messageId c-1) and nothing after it; child-1 idle end_turn; the parent's own text (messageId p-1); end_turn.",
			Steps: []Step{
				announceChild(),
				childStep(Step{Step: StepText, Text: "The child reports back.", MessageID: strPtr("c-1")}),
				subagentUpdate(`,"state":{"state":"idle","stopReason":"end_turn"}`),
				{Step: StepText, Text: "The parent is done.", MessageID: strPtr("p-1")},
				stop("end_turn"),
			},
		},
		"subagent-background": {
			Description: "Announces child-1; under child-1 an execute tool call bg-call (title \"sleep 5\") in progress; the parent's own text (messageId p-1); end_turn, the child still running (#subagent-background-end ends it).",
			Steps: []Step{
				announceChild(),
				childStep(Step{Step: StepToolCall, ToolCallID: "bg-call", Title: "sleep 5", Kind: "execute", Status: "in_progress"}),
				{Step: StepText, Text: "Started in the background.", MessageID: strPtr("p-1")},
				stop("end_turn"),
			},
		},
		"subagent-background-end": {
			Description: "Sleeps 20 ms; under child-1 bg-call completed; child-1 idle end_turn; the parent's own text (messageId p-2); end_turn.",
			Steps: []Step{
				{Step: StepSleep, Ms: 20},
				childStep(Step{Step: StepToolCallUpdate, ToolCallID: "bg-call", Status: "completed"}),
				subagentUpdate(`,"state":{"state":"idle","stopReason":"end_turn"}`),
				{Step: StepText, Text: "The background work is done.", MessageID: strPtr("p-2")},
				stop("end_turn"),
			},
		},
		"subagent-wait": {
			Description: "Announces child-1 (running) and a child text, then waits for session/cancel; on cancel reports child-1 idle cancelled.",
			Steps: []Step{
				announceChild(),
				childStep(Step{Step: StepText, Text: "Working.", MessageID: strPtr("c-1")}),
				{Step: StepWaitCancel},
			},
			OnCancel: []Step{subagentUpdate(`,"state":{"state":"idle","stopReason":"cancelled"}`)},
		},
	}
}
