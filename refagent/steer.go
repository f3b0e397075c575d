package refagent

import (
	"encoding/json"
	"strings"
)

// handleSteer answers _session/steering (Script.Steering): the steer's text
// goes to the session's running turn, which a waitSteer step reads.
func (a *agent) handleSteer(m *inMsg) {
	var p struct {
		SessionID string `json:"sessionId"`
		Prompt    []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"prompt"`
	}
	if err := json.Unmarshal(orEmpty(m.Params), &p); err != nil || p.SessionID == "" || len(p.Prompt) == 0 {
		a.writeResponse(m.ID, nil, invalidParams("steer params require a non-empty sessionId and a non-empty prompt array"))
		return
	}
	var texts []string
	for _, b := range p.Prompt {
		if b.Type == "text" {
			texts = append(texts, b.Text)
		}
	}
	a.mu.Lock()
	var t *turnRun
	if s := a.sessions[p.SessionID]; s != nil && s.turn != nil && !s.turn.responded {
		t = s.turn
	}
	a.mu.Unlock()
	if t == nil {
		a.writeResponse(m.ID, map[string]string{"outcome": "promptRequired", "reason": "noRunningTurn"}, nil)
		return
	}
	select {
	case t.steers <- strings.Join(texts, "\n"):
	default: // a turn that never reads its steers keeps the first 64
	}
	a.writeResponse(m.ID, map[string]string{"outcome": "injected"}, nil)
}
