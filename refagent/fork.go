package refagent

import (
	"encoding/json"
	"path/filepath"
	"strconv"
)

// handleFork serves session/fork: scripted, else, when the agent
// advertises sessionCapabilities.fork, a new session "fork-N" (N counts
// the forks of this process) that takes prompts like any other; else
// -32601. The source session need not be known to this process: a fork
// of an earlier run's session is the common case.
func (a *agent) handleFork(m *inMsg) {
	r := a.reply(m.Method)
	if r == nil && !a.caps.fork {
		a.writeResponse(m.ID, nil, methodNotFound(m.Method))
		return
	}
	var p struct {
		SessionID *string `json:"sessionId"`
		Cwd       *string `json:"cwd"`
	}
	if json.Unmarshal(orEmpty(m.Params), &p) != nil || p.SessionID == nil || p.Cwd == nil || !filepath.IsAbs(*p.Cwd) {
		a.writeResponse(m.ID, nil, invalidParams("session/fork needs a string sessionId and an absolute cwd"))
		return
	}
	a.mu.Lock()
	a.forks++
	id := "fork-" + strconv.Itoa(a.forks)
	a.mu.Unlock()
	id = scriptedSessionID(r, id)
	a.serve(m, r, &stepCtx{session: id},
		func() (any, *RPCError) { return newSessionResult{SessionID: id}, nil },
		func() { a.register(id) })
}
