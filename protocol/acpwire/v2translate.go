package acpwire

import "encoding/json"

// TranslateV2Update rewrites a v2 session/update whose kind v1 has under
// another shape into that v1 shape, so one event stream reads both
// versions (docs/behaviour.md#protocol-v2): user_message, agent_message
// and agent_thought (full content arrays) become one chunk of their text,
// plan_update of a plan of items becomes plan. ok is false for every
// other update, which passes unchanged; plan_removed, a tool's terminal
// and content chunks, and a message without text content become no update
// (ok true, nil params).
func TranslateV2Update(kind string, params json.RawMessage) (out json.RawMessage, ok bool) {
	switch kind {
	case UpdateUserMessage, UpdateAgentMessage, UpdateAgentThought:
		var n struct {
			SessionID string `json:"sessionId"`
			Update    struct {
				MessageID string         `json:"messageId"`
				Content   []ContentBlock `json:"content"`
			} `json:"update"`
		}
		if json.Unmarshal(params, &n) != nil {
			return params, false
		}
		text, has := "", false
		for _, b := range n.Update.Content {
			if b.Type == "text" {
				text, has = text+b.Text, true
			}
		}
		if !has && kind != UpdateUserMessage {
			return nil, true
		}
		return mustJSON(map[string]any{"sessionId": n.SessionID, "update": map[string]any{
			"sessionUpdate": kind + "_chunk", "messageId": n.Update.MessageID,
			"content": ContentBlock{Type: "text", Text: text}}}), true
	case UpdatePlanUpdate:
		var n struct {
			SessionID string `json:"sessionId"`
			Update    struct {
				Plan struct {
					Entries json.RawMessage `json:"entries"`
				} `json:"plan"`
			} `json:"update"`
		}
		if json.Unmarshal(params, &n) != nil || len(n.Update.Plan.Entries) == 0 {
			return nil, true
		}
		return mustJSON(map[string]any{"sessionId": n.SessionID, "update": map[string]any{
			"sessionUpdate": UpdatePlan, "entries": n.Update.Plan.Entries}}), true
	case UpdatePlanRemoved:
		return nil, true
	case UpdateTerminalUpdate, UpdateTerminalOutputChunk, UpdateToolCallContentChunk:
		// A running tool's output: the runtime is alive, no event (the
		// tool's result is its tool_call_update, as on v1).
		return nil, true
	}
	return params, false
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}
