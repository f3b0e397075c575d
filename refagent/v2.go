package refagent

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// The protocol versions the agent serves (--protocol): "1" serves v1
// (a v2 initialize is answered with v1), "2" serves the ACP v2 draft only
// (a v1 initialize is refused with -32022), "auto" serves what the client
// asks for.
const (
	protocolV1   = "1"
	protocolV2   = "2"
	protocolAuto = "auto"
)

// codeUnsupportedVersion is the error an initialize asking for a version
// the agent does not serve is answered with.
const codeUnsupportedVersion = -32022

// validProtocol reports whether p is a --protocol value.
func validProtocol(p string) bool {
	return p == protocolV1 || p == protocolV2 || p == protocolAuto
}

// negotiate picks the version of the connection for an initialize asking
// for requested: ok is false (with the error to answer) when the agent
// serves v2 only and the client asked for less.
func (a *agent) negotiate(params json.RawMessage) (version int, e *RPCError) {
	var p struct {
		ProtocolVersion int `json:"protocolVersion"`
	}
	_ = json.Unmarshal(orEmpty(params), &p)
	switch {
	case a.protocol == protocolV2 && p.ProtocolVersion < 2:
		data, _ := json.Marshal(map[string]any{"requested": p.ProtocolVersion, "supported": []int{2}})
		return 0, &RPCError{Code: codeUnsupportedVersion, Message: "Unsupported protocol version", Data: data}
	case (a.protocol == protocolV2 || a.protocol == protocolAuto) && p.ProtocolVersion >= 2:
		return 2, nil
	}
	return 1, nil
}

// v2InitResult is the v2 initialize answer of the agent's v1 one: "info",
// "capabilities.session" (the v2 baseline: new, list, resume with replay,
// close, prompt, cancel) with every v1 marker beyond it, auth methods by
// "methodId".
func v2InitResult(v1 initResult) any {
	var caps struct {
		PromptCapabilities  map[string]bool            `json:"promptCapabilities"`
		MCPCapabilities     map[string]bool            `json:"mcpCapabilities"`
		SessionCapabilities map[string]json.RawMessage `json:"sessionCapabilities"`
	}
	_ = json.Unmarshal(v1.AgentCapabilities, &caps)
	session := map[string]any{}
	for k, v := range caps.SessionCapabilities {
		switch k {
		case "resume", "close", "list": // v2's session baseline
		default: // delete, fork, additionalDirectories, systemPrompt, …
			session[k] = v
		}
	}
	prompt := map[string]any{}
	for k, on := range caps.PromptCapabilities {
		if on {
			prompt[k] = struct{}{}
		}
	}
	mcp := map[string]any{"stdio": struct{}{}}
	if caps.MCPCapabilities["http"] {
		mcp["http"] = struct{}{}
	}
	session["prompt"], session["mcp"] = prompt, mcp
	var methods []map[string]any
	_ = json.Unmarshal(v1.AuthMethods, &methods)
	for _, m := range methods {
		if id, ok := m["id"]; ok {
			delete(m, "id")
			m["methodId"] = id
		}
		if _, ok := m["type"]; !ok {
			m["type"] = "agent"
		}
	}
	if methods == nil {
		methods = []map[string]any{}
	}
	return map[string]any{
		"protocolVersion": 2,
		"info":            v1.AgentInfo,
		"capabilities":    map[string]any{"session": session},
		"authMethods":     methods,
	}
}

// acceptV2 answers a v2 prompt at once: the acceptance with the user
// message's id, the user_message, and the running state. It runs on the
// dispatcher before the turn's steps start, so it precedes them.
func (a *agent) acceptV2(t *turnRun, prompt []json.RawMessage) {
	id := "user-" + strconv.Itoa(t.n)
	a.writeResponse(t.id, map[string]string{"messageId": id}, nil)
	_ = a.writeMsg(outMsg{Method: "session/update", Params: updateParams{SessionID: t.sess.id,
		Update: map[string]any{"sessionUpdate": "user_message", "messageId": id, "content": prompt}}})
	_ = a.writeMsg(outMsg{Method: "session/update", Params: updateParams{SessionID: t.sess.id,
		Update: map[string]any{"sessionUpdate": "state_update", "state": "running"}}})
}

// refuseV2 carries out a scripted acceptance (Turn.Accept): an error
// answers the prompt and ends the turn; Never leaves the prompt
// unanswered, the turn registered (a cancel finds it; nothing answers).
func (a *agent) refuseV2(t *turnRun, acc *Reply) {
	if acc.Error == nil {
		return
	}
	a.mu.Lock()
	t.responded = true
	if t.sess.turn == t {
		t.sess.turn = nil
	}
	a.mu.Unlock()
	t.cancelCtx()
	a.writeResponse(t.id, nil, acc.Error)
}

// idleV2 ends a v2 turn: what v1 answers the prompt with becomes the idle
// state_update. A stop reason (and the _meta of the answer, whose usage is
// the idle's) goes on the idle; -32800 is the stop reason "cancelled"; any
// other error is the stop reason "error" with that error; a result without
// a stop reason is an idle without one.
func (a *agent) idleV2(t *turnRun, result any, e *RPCError) {
	idle := map[string]any{"sessionUpdate": "state_update", "state": "idle"}
	switch {
	case e != nil && e.Code == codeRequestCanceled:
		idle["stopReason"] = "cancelled"
	case e != nil:
		idle["stopReason"] = "error"
		idle["error"] = e
	default:
		var r struct {
			StopReason *string         `json:"stopReason"`
			Usage      json.RawMessage `json:"usage"`
			Meta       json.RawMessage `json:"_meta"`
		}
		raw, err := json.Marshal(result)
		if err == nil {
			err = json.Unmarshal(raw, &r)
		}
		if err != nil {
			fmt.Fprintf(a.stderr, "acpdrive agent: a v2 turn's result is not an object: %v\n", err)
		}
		if r.StopReason != nil {
			idle["stopReason"] = *r.StopReason
		}
		if len(r.Usage) > 0 {
			idle["usage"] = r.Usage
		}
		if len(r.Meta) > 0 {
			idle["_meta"] = r.Meta
		}
	}
	_ = a.writeMsg(outMsg{Method: "session/update", Params: updateParams{SessionID: t.sess.id, Update: idle}})
}

// resumeV2 serves v2's session/resume: with replayFrom it replays as
// session/load does, without it it resumes as session/resume does; both
// are the v2 baseline, advertised or not.
func (a *agent) resumeV2(m *inMsg) {
	var p struct {
		ReplayFrom json.RawMessage `json:"replayFrom"`
	}
	_ = json.Unmarshal(orEmpty(m.Params), &p)
	if len(p.ReplayFrom) > 0 && string(p.ReplayFrom) != "null" {
		a.handleContinue(m, true, defaultLoadReply())
		return
	}
	a.handleContinue(m, true, nil)
}

// closeSettleBound is how long a v2 session/close waits for the session's
// running turn to end before it answers anyway.
const closeSettleBound = 2 * time.Second

// closeTurns cancels the session's running turn for session/close. On v2,
// which settles a session's turns before the close's response, it waits
// (bounded) until the turn's idle is written.
func (a *agent) closeTurns(id string) {
	a.mu.Lock()
	var t *turnRun
	if s := a.sessions[id]; s != nil {
		t = s.turn
	}
	a.mu.Unlock()
	if t == nil {
		return
	}
	a.cancelTurn(t, false)
	if !a.v2.Load() {
		return
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(closeSettleBound)
	for !a.isResponded(t) {
		select {
		case <-tick.C:
		case <-deadline:
			return
		case <-a.ctx.Done():
			return
		}
	}
}
