package refagent

import (
	"encoding/json"
	"strings"
	"testing"
)

// answer reads the agent's lines up to the response to request id and
// returns its result.
func (h *harness) answer(id int) json.RawMessage {
	h.t.Helper()
	for {
		line := h.next()
		var m struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			h.t.Fatalf("line %s: %v", truncate(line), err)
		}
		if m.ID != nil && *m.ID == id && m.Method == "" {
			if m.Result == nil {
				h.t.Fatalf("request %d answered without a result: %s", id, truncate(line))
			}
			return m.Result
		}
	}
}

// TestAgentName: --agent-name replaces agentInfo.name, whatever the
// scenario, keeping the rest of agentInfo.
func TestAgentName(t *testing.T) {
	t.Parallel()
	h := startAgent(t, "--agent-name", "Someone Else")
	h.send(initReq)
	h.expect(strings.Replace(initResp, `"name":"acpdrive-reference-agent"`, `"name":"Someone Else"`, 1))
}

// TestUsageRunningTotal: the usage-running-total scenario advertises
// session/close and reports, at each turn's end, the session's running
// total of the turns' usage; each session has its own.
func TestUsageRunningTotal(t *testing.T) {
	t.Parallel()
	h := startAgent(t, "--scenario", "usage-running-total", "--agent-name", "Copilot")
	h.send(initReq)
	var init struct {
		AgentInfo struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"agentInfo"`
		AgentCapabilities struct {
			SessionCapabilities map[string]json.RawMessage `json:"sessionCapabilities"`
		} `json:"agentCapabilities"`
	}
	if err := json.Unmarshal(h.answer(0), &init); err != nil {
		t.Fatal(err)
	}
	if init.AgentInfo.Name != "Copilot" || init.AgentInfo.Version != Version {
		t.Fatalf("agentInfo %+v", init.AgentInfo)
	}
	if _, ok := init.AgentCapabilities.SessionCapabilities["close"]; !ok {
		t.Fatal("session/close not advertised")
	}
	h.send(newReq)
	h.expect(newResp)
	h.send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	h.expect(`{"jsonrpc":"2.0","id":2,"result":{"sessionId":"ref-2"}}`)

	turn := func(id int, session, usage, want string) {
		t.Helper()
		h.send(prompt(id, session, `#usage-wire {"usage":`+usage+`}`))
		var res struct {
			Usage json.RawMessage `json:"usage"`
		}
		if err := json.Unmarshal(h.answer(id), &res); err != nil {
			t.Fatal(err)
		}
		if string(res.Usage) != want {
			t.Fatalf("request %d: usage %s, want %s", id, res.Usage, want)
		}
	}
	turn(3, "ref-1", `{"inputTokens":100,"outputTokens":10,"totalTokens":110}`, `{"inputTokens":100,"outputTokens":10,"totalTokens":110}`)
	turn(4, "ref-1", `{"inputTokens":40,"outputTokens":5,"cachedReadTokens":2,"totalTokens":47}`, `{"cachedReadTokens":2,"inputTokens":140,"outputTokens":15,"totalTokens":157}`)
	turn(5, "ref-2", `{"inputTokens":1,"outputTokens":1,"totalTokens":2}`, `{"inputTokens":1,"outputTokens":1,"totalTokens":2}`)
	turn(6, "ref-1", `null`, `null`)
	turn(7, "ref-1", `{"inputTokens":1,"outputTokens":1,"totalTokens":2}`, `{"cachedReadTokens":2,"inputTokens":141,"outputTokens":16,"totalTokens":159}`)
}
