package refagent

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestInitialize(t *testing.T) {
	caps := `{"loadSession":false,"promptCapabilities":{},"mcpCapabilities":{"http":false,"sse":false}}`
	info := `{"name":"acpdrive-reference-agent","title":"acpdrive reference agent","version":"0.1.0"}`
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"default", nil, initResp},
		{"echo scenario", []string{"--scenario", "echo"}, initResp},
		{"wrong-version", []string{"--scenario", "wrong-version"},
			`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":2,"agentCapabilities":` + caps + `,"agentInfo":` + info + `,"authMethods":[]}}`},
		{"no-agent-info", []string{"--scenario", "no-agent-info"},
			`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":` + caps + `,"authMethods":[]}}`},
		{"close", []string{"--scenario", "close"},
			`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":false,"promptCapabilities":{},"mcpCapabilities":{"http":false,"sse":false},"sessionCapabilities":{"close":{}}},"agentInfo":` + info + `,"authMethods":[]}}`},
		{"init-error", []string{"--scenario", "init-error"},
			`{"jsonrpc":"2.0","id":0,"error":{"code":-32603,"message":"Internal error: scripted initialize failure"}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := startAgent(t, tc.args...)
			h.send(initReq)
			h.expect(tc.want)
			if code := h.closeStdin(); code != 0 {
				t.Fatalf("exit code %d, want 0", code)
			}
		})
	}
}

func TestInitializeStringID(t *testing.T) {
	t.Parallel()
	h := startAgent(t)
	h.send(`{"jsonrpc":"2.0","id":"init-7","method":"initialize","params":{"protocolVersion":1}}`)
	h.expect(strings.Replace(initResp, `"id":0`, `"id":"init-7"`, 1))
}

func TestInitializeStartupFailures(t *testing.T) {
	t.Run("exit-before-init", func(t *testing.T) {
		t.Parallel()
		h := startAgent(t, "--scenario", "exit-before-init")
		h.send(initReq)
		if code := h.wait(); code != 7 {
			t.Fatalf("exit code %d, want 7", code)
		}
		if got := h.rest(); len(got) != 0 {
			t.Fatalf("stdout %q, want nothing", got)
		}
		if se := h.stderr.String(); se != ansiStartupStderr || !strings.Contains(se, "\x1b[1;31m") {
			t.Fatalf("stderr %q", se)
		}
	})
	t.Run("hang-init", func(t *testing.T) {
		t.Parallel()
		h := startAgent(t, "--scenario", "hang-init")
		h.send(initReq)
		h.quiet(200 * time.Millisecond)
		if code := h.closeStdin(); code != 0 {
			t.Fatalf("exit code %d", code)
		}
	})
	t.Run("slow-init", func(t *testing.T) {
		t.Parallel()
		h := startAgent(t, "--scenario", "slow-init")
		// The answer comes, late; how late is the scenario's own
		// business (app's read-timeout tests rely on it), not asserted.
		h.send(initReq)
		h.expect(initResp)
	})
}

func TestSessionNew(t *testing.T) {
	tests := []struct {
		name   string
		params string
		want   string
	}{
		{"valid", `{"cwd":"/home/u/proj","mcpServers":[]}`, `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"ref-1"}}`},
		{"with servers", `{"cwd":"/","mcpServers":[{"name":"fs","command":"/bin/fs","args":[],"env":[]}]}`, `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"ref-1"}}`},
		{"relative cwd", `{"cwd":"proj","mcpServers":[]}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: cwd must be an absolute path"}}`},
		{"missing cwd", `{"mcpServers":[]}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: cwd must be an absolute path"}}`},
		{"null servers", `{"cwd":"/tmp","mcpServers":null}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: mcpServers must be an array"}}`},
		{"missing servers", `{"cwd":"/tmp"}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: mcpServers must be an array"}}`},
		{"object servers", `{"cwd":"/tmp","mcpServers":{}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: mcpServers must be an array"}}`},
		{"cwd not a string", `{"cwd":7,"mcpServers":[]}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params: session/new params must be an object with a string cwd and an array mcpServers"}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := startAgent(t)
			h.send(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":` + tc.params + `}`)
			h.expect(tc.want)
		})
	}
}

func TestSessionNewNumbering(t *testing.T) {
	t.Parallel()
	h := startAgent(t)
	h.send(newReq)
	h.expect(newResp)
	h.send(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
	h.expect(`{"jsonrpc":"2.0","id":2,"result":{"sessionId":"ref-2"}}`)
	h.send(prompt(3, "ref-9", "hi"))
	h.expect(`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params: unknown sessionId \"ref-9\""}}`)
}

func TestSessionNewScripted(t *testing.T) {
	t.Run("auth-required", func(t *testing.T) {
		t.Parallel()
		h := startAgent(t, "--scenario", "auth-required")
		h.send(newReq)
		h.expect(`{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"Authentication required"}}`)
	})
	t.Run("new-exit", func(t *testing.T) {
		t.Parallel()
		h := startAgent(t, "--scenario", "new-exit")
		h.send(newReq)
		if code := h.wait(); code != 1 {
			t.Fatalf("exit code %d, want 1", code)
		}
		if !strings.Contains(h.stderr.String(), "cannot create a session") {
			t.Fatalf("stderr %q", h.stderr.String())
		}
	})
	t.Run("commands-after-new", func(t *testing.T) {
		t.Parallel()
		h := startAgent(t, "--scenario", "commands-after-new")
		h.send(newReq)
		h.expect(newResp, update("ref-1", `{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"web","description":"Search the web","input":{"hint":"query"}}]}`))
	})
}

func TestEchoTurn(t *testing.T) {
	t.Parallel()
	h := openSession(t)
	h.send(prompt(2, "ref-1", "hello, reference agent!"))
	h.expect(
		chunk("ref-1", "m-1", "hello, reference"),
		chunk("ref-1", "m-1", " agent!"),
		stopLine(2, "end_turn"),
	)
	// A second turn: the message id follows the turn number; several text
	// blocks are joined with "\n"; multi-byte runes are never split.
	h.send(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"ref-1","prompt":[{"type":"text","text":"ééééééééé"},{"type":"resource_link","uri":"file:///a","name":"a"},{"type":"text","text":"b"}]}}`)
	h.expect(
		chunk("ref-1", "m-2", "éééééééé"),
		chunk("ref-1", "m-2", "é\nb"),
		stopLine(3, "end_turn"),
	)
	// An empty prompt echoes nothing.
	h.send(`{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{"sessionId":"ref-1","prompt":[]}}`)
	h.expect(stopLine(4, "end_turn"))
	if code := h.closeStdin(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}

func TestPromptValidation(t *testing.T) {
	t.Parallel()
	h := openSession(t)
	h.send(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"ref-1"}}`)
	h.expect(`{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Invalid params: session/prompt needs a string sessionId and a prompt array"}}`)
	// One turn at a time per session.
	h.send(prompt(3, "ref-1", "#wait-cancel"))
	h.expect(chunk("ref-1", "m-1", "Waiting for a cancel."))
	h.send(prompt(4, "ref-1", "again"))
	h.expect(`{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"a turn is already running in this session"}}`)
	h.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"ref-1"}}`)
	h.expect(stopLine(3, "cancelled"))
}

func TestPermissionRoundTrip(t *testing.T) {
	t.Parallel()
	logPath := filepath.Join(t.TempDir(), "agent.log")
	h := openSession(t, "--log", logPath)
	h.send(prompt(2, "ref-1", "#permission-refusable"))
	h.expect(
		chunk("ref-1", "m-1", "I need to edit a file."),
		`{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"ref-1","toolCall":{"toolCallId":"call-perm","title":"Edit /tmp/acpdrive-reference.txt","kind":"edit"},"options":[{"optionId":"allow-once","name":"Allow once","kind":"allow_once"},{"optionId":"allow-always","name":"Always allow","kind":"allow_always"},{"optionId":"reject-once","name":"Reject","kind":"reject_once"},{"optionId":"reject-always","name":"Never allow","kind":"reject_always"}]}}`,
	)
	h.send(`{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"reject-once"}}}`)
	h.expect(
		chunk("ref-1", "report-1-1", "permission outcome: selected reject-once"),
		chunk("ref-1", "m-after", "Continuing after the permission answer."),
		stopLine(2, "end_turn"),
	)
	// The second request of the process gets id 1; a cancelled outcome is
	// reported as such.
	h.send(prompt(3, "ref-1", "#permission-no-reject"))
	h.expect(chunk("ref-1", "m-2", "I need to run a command."))
	req := h.next()
	if !strings.HasPrefix(req, `{"jsonrpc":"2.0","id":1,"method":"session/request_permission"`) {
		t.Fatalf("permission request: %s", req)
	}
	h.send(`{"jsonrpc":"2.0","id":1,"result":{"outcome":{"outcome":"cancelled"}}}`)
	h.expect(chunk("ref-1", "report-2-1", "permission outcome: cancelled"))
	h.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"ref-1"}}`)
	h.expect(stopLine(3, "cancelled"))
	if code := h.closeStdin(); code != 0 {
		t.Fatalf("exit code %d", code)
	}

	recs := readLog(t, logPath)
	var kinds []string
	for _, r := range recs {
		kinds = append(kinds, r.Kind+" "+r.Method+r.Answers)
	}
	want := []string{
		"request initialize", "request session/new", "request session/prompt",
		"response session/request_permission", "request session/prompt",
		"response session/request_permission", "notification session/cancel", "eof ",
	}
	if !reflect.DeepEqual(kinds, want) {
		t.Fatalf("log kinds\n got %q\nwant %q", kinds, want)
	}
	var answer struct {
		Result struct {
			Outcome struct{ Outcome, OptionID string } `json:"outcome"`
		} `json:"result"`
	}
	if err := json.Unmarshal(recs[3].Message, &answer); err != nil {
		t.Fatal(err)
	}
	if answer.Result.Outcome.OptionID != "reject-once" || string(recs[3].ID) != "0" {
		t.Fatalf("logged answer %s", recs[3].Message)
	}
}

func readLog(t *testing.T, path string) []LogRecord {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []LogRecord
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r LogRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		if r.Time == "" {
			t.Fatalf("log line without time: %s", sc.Text())
		}
		recs = append(recs, r)
	}
	return recs
}

func TestCancel(t *testing.T) {
	cancel := `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"ref-1"}}`
	tests := []struct {
		name  string
		turn  string
		first []string // lines before the cancel is sent
		send  string
		after []string
	}{
		{"respond", "#wait-cancel", []string{chunk("ref-1", "m-1", "Waiting for a cancel.")}, cancel,
			[]string{stopLine(2, "cancelled")}},
		{"error mode", "#cancel-error", []string{chunk("ref-1", "m-1", "Waiting for a cancel.")}, cancel,
			[]string{`{"jsonrpc":"2.0","id":2,"error":{"code":-32800,"message":"Request cancelled"}}`}},
		{"ignore mode", "#cancel-ignore", []string{chunk("ref-1", "m-1", "Waiting for a cancel.")}, cancel,
			[]string{chunk("ref-1", "m-ignored", "Ignored the cancel."), stopLine(2, "end_turn")}},
		{"updates after cancel", "#cancel-updates", []string{chunk("ref-1", "m-1", "Waiting for a cancel.")}, cancel,
			[]string{
				chunk("ref-1", "m-cleanup", "Cleaning up after the cancel."),
				update("ref-1", `{"sessionUpdate":"tool_call_update","toolCallId":"call-cleanup","title":"cancelled","status":"failed"}`),
				stopLine(2, "cancelled"),
			}},
		{"cancel_request", "#wait-cancel", []string{chunk("ref-1", "m-1", "Waiting for a cancel.")},
			`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":2}}`,
			[]string{`{"jsonrpc":"2.0","id":2,"error":{"code":-32800,"message":"Request cancelled"}}`}},
		{"mid sleep", "#slow-accept 5000", nil, cancel, []string{stopLine(2, "cancelled")}},
		{"after the answer", "#stop-end_turn", []string{chunk("ref-1", "m-1", "Stopping with end_turn."), stopLine(2, "end_turn")}, cancel, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := openSession(t)
			h.send(prompt(2, "ref-1", tc.turn))
			h.expect(tc.first...)
			h.send(tc.send)
			h.expect(tc.after...)
			h.quiet(50 * time.Millisecond)
		})
	}
}

func TestCancelAbandonsPendingRequest(t *testing.T) {
	t.Parallel()
	script := writeScript(t, `{"turns":{"ask":{"cancelRequests":true,"steps":[{"step":"permission","report":true},{"step":"text","text":"never sent"}]}}}`)
	h2 := openSession(t, "--script", script)
	h2.send(prompt(2, "ref-1", "#ask"))
	if req := h2.next(); !strings.Contains(req, `"method":"session/request_permission"`) {
		t.Fatalf("got %s", req)
	}
	h2.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"ref-1"}}`)
	h2.expect(
		`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":0}}`,
		stopLine(2, "cancelled"),
	)
	// The late answer to the abandoned request is accepted silently and the
	// session takes the next turn.
	h2.send(`{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"cancelled"}}}`)
	h2.send(prompt(3, "ref-1", "ok"))
	h2.expect(chunk("ref-1", "m-2", "ok"), stopLine(3, "end_turn"))
}

func writeScript(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestUnknownMethods(t *testing.T) {
	tests := []struct {
		name string
		send string
		want string // "" = no answer
	}{
		{"extension request", `{"jsonrpc":"2.0","id":9,"method":"_acpdrive/probe/unimplemented","params":{}}`,
			`{"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"Method not found","data":{"method":"_acpdrive/probe/unimplemented"}}}`},
		{"plain request", `{"jsonrpc":"2.0","id":"x","method":"session/fork","params":{}}`,
			`{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"Method not found","data":{"method":"session/fork"}}}`},
		{"load not advertised", `{"jsonrpc":"2.0","id":5,"method":"session/load","params":{"sessionId":"s","cwd":"/tmp","mcpServers":[]}}`,
			`{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"Method not found","data":{"method":"session/load"}}}`},
		{"resume not advertised", `{"jsonrpc":"2.0","id":5,"method":"session/resume","params":{"sessionId":"s","cwd":"/tmp"}}`,
			`{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"Method not found","data":{"method":"session/resume"}}}`},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"_x","params":{}}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"Method not found","data":{"method":"_x"}}}`},
		{"close", `{"jsonrpc":"2.0","id":6,"method":"session/close","params":{"sessionId":"ref-1"}}`, `{"jsonrpc":"2.0","id":6,"result":{}}`},
		{"delete", `{"jsonrpc":"2.0","id":6,"method":"session/delete","params":{"sessionId":"ref-1"}}`, `{"jsonrpc":"2.0","id":6,"result":{}}`},
		{"extension notification", `{"jsonrpc":"2.0","method":"_acpdrive/ping","params":{}}`, ""},
		{"unknown notification", `{"jsonrpc":"2.0","method":"$/progress","params":{}}`, ""},
		{"parse error", `{"jsonrpc":"2.0",`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"x"}]`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}`},
		{"empty object", `{}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := openSession(t)
			h.send(tc.send)
			if tc.want != "" {
				h.expect(tc.want)
			}
			// The connection stays usable.
			h.send(`{"jsonrpc":"2.0","id":77,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`)
			h.expect(`{"jsonrpc":"2.0","id":77,"result":{"sessionId":"ref-2"}}`)
		})
	}
}

func TestBurstCount(t *testing.T) {
	for _, n := range []int{0, 1, 5000} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			t.Parallel()
			h := openSession(t)
			h.send(prompt(2, "ref-1", "#burst "+strconv.Itoa(n)))
			want := chunk("ref-1", "m-1", "x")
			for i := range n {
				if got := h.next(); got != want {
					t.Fatalf("line %d: %s", i, got)
				}
			}
			h.expect(stopLine(2, "end_turn"))
		})
	}
	t.Run("default 1000", func(t *testing.T) {
		t.Parallel()
		h := openSession(t, "--scenario", "burst")
		h.send(prompt(2, "ref-1", "go"))
		for i := range 1000 {
			if got := h.next(); !strings.Contains(got, `"agent_message_chunk"`) {
				t.Fatalf("line %d: %s", i, got)
			}
		}
		h.expect(stopLine(2, "end_turn"))
	})
}

func TestStopReasons(t *testing.T) {
	tests := []struct{ turn, reason string }{
		{"stop-end_turn", "end_turn"},
		{"stop-refusal", "refusal"},
		{"stop-max_tokens", "max_tokens"},
		{"stop-max_turn_requests", "max_turn_requests"},
		{"stop-cancelled", "cancelled"},
		{"stop-unknown", "paused"},
	}
	for _, tc := range tests {
		t.Run(tc.turn, func(t *testing.T) {
			t.Parallel()
			h := openSession(t)
			h.send(prompt(2, "ref-1", "#"+tc.turn))
			h.expect(chunk("ref-1", "m-1", "Stopping with "+tc.reason+"."), stopLine(2, tc.reason))
			// The same turn as a scenario: any prompt runs it.
			h2 := openSession(t, "--scenario", tc.turn)
			h2.send(prompt(2, "ref-1", "anything"))
			h2.expect(chunk("ref-1", "m-1", "Stopping with "+tc.reason+"."), stopLine(2, tc.reason))
		})
	}
}

func TestBrokenAnswers(t *testing.T) {
	tests := []struct {
		turn string
		want []string
	}{
		{"prompt-error", []string{`{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"Internal error: scripted failure"}}`}},
		{"bad-result", []string{`{"jsonrpc":"2.0","id":2,"result":42}`}},
		{"no-response", []string{chunk("ref-1", "m-1", "I will never answer.")}},
	}
	for _, tc := range tests {
		t.Run(tc.turn, func(t *testing.T) {
			t.Parallel()
			h := openSession(t)
			h.send(prompt(2, "ref-1", "#"+tc.turn))
			h.expect(tc.want...)
			h.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"ref-1"}}`)
			h.quiet(100 * time.Millisecond)
		})
	}
}

func TestToolsTurn(t *testing.T) {
	t.Parallel()
	h := openSession(t)
	h.send(prompt(2, "ref-1", "#tools"))
	type upd struct {
		Params struct {
			Update struct {
				SessionUpdate, ToolCallID, Kind, Status, Title string
			} `json:"update"`
		} `json:"params"`
	}
	var kinds []string
	ends := map[string]string{}
	for range 33 {
		var u upd
		if err := json.Unmarshal([]byte(h.next()), &u); err != nil {
			t.Fatal(err)
		}
		x := u.Params.Update
		switch {
		case x.SessionUpdate == "tool_call":
			kinds = append(kinds, x.Kind)
		case x.Status == "completed" || x.Status == "failed":
			ends[x.ToolCallID] = x.Status + ": " + x.Title
		}
	}
	h.expect(stopLine(2, "end_turn"))
	wantKinds := append(append([]string(nil), toolKinds...), "teleport")
	if !reflect.DeepEqual(kinds, wantKinds) {
		t.Fatalf("kinds %q", kinds)
	}
	if len(ends) != 11 || ends["call-6"] != "failed: execute failed: exit status 1" || ends["call-1"] != "completed: read finished" {
		t.Fatalf("terminal updates %v", ends)
	}
}

func TestUpdatesTurn(t *testing.T) {
	t.Parallel()
	h := openSession(t)
	h.send(prompt(2, "ref-1", "#updates"))
	h.expect(
		update("ref-1", `{"sessionUpdate":"agent_thought_chunk","messageId":"t-1","content":{"type":"text","text":"Thinking about the task."}}`),
		update("ref-1", `{"sessionUpdate":"plan","entries":`+string(defaultPlanEntries)+`}`),
		chunk("ref-1", "m-1", "Before the session-state updates. "),
		update("ref-1", `{"sessionUpdate":"available_commands_update","availableCommands":`+string(defaultCommands)+`}`),
		update("ref-1", `{"sessionUpdate":"current_mode_update","currentModeId":"code"}`),
		update("ref-1", `{"sessionUpdate":"config_option_update","configOptions":`+string(defaultConfigOptions)+`}`),
		update("ref-1", `{"sessionUpdate":"session_info_update","title":"Reference session","updatedAt":"2026-01-01T00:00:00Z"}`),
		update("ref-1", `{"sessionUpdate":"usage_update","used":53000,"size":200000,"cost":{"amount":0.045,"currency":"USD"}}`),
		chunk("ref-1", "m-1", "After the session-state updates."),
		update("ref-1", `{"sessionUpdate":"agent_message_chunk","messageId":"m-1","content":{"type":"text","text":"Claude Code is running in a sandbox."},"_meta":{"claudeCode":{"kind":"informational"}}}`),
		`{"jsonrpc":"2.0","method":"_auth/status_update","params":{"authStatus":{"kind":"api_key","label":"Anthropic API key","detail":"ANTHROPIC_API_KEY"}}}`,
		update("ref-1", `{"sessionUpdate":"notice","severity":"warning","title":"MCP server down"}`),
		update("ref-1", `{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}`),
		update("ref-1", `{"sessionUpdate":"tool_call","toolCallId":"call-read","title":"Read README.md","kind":"read","status":"pending"}`),
		update("ref-1", `{"sessionUpdate":"tool_call_update","toolCallId":"call-read","status":"completed"}`),
		update("ref-1", `{"sessionUpdate":"agent_message_chunk","messageId":"img","content":{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}}`),
		chunk("other-session", "m-1", "for another session"),
		stopLine(2, "end_turn"),
	)
}

func TestTurnScenarios(t *testing.T) {
	t.Run("garbage", func(t *testing.T) {
		t.Parallel()
		h := openSession(t)
		h.send(prompt(2, "ref-1", "#garbage"))
		h.expect(
			"this line is not JSON",
			`{"jsonrpc":"2.0","method":"session/update","params":`,
			"\x1b[32mcoloured progress output\x1b[0m",
			chunk("ref-1", "m-1", "Still here after the garbage."),
			stopLine(2, "end_turn"),
		)
	})
	t.Run("huge-line", func(t *testing.T) {
		t.Parallel()
		h := openSession(t)
		h.send(prompt(2, "ref-1", "#huge-line"))
		line := h.next()
		if len(line) != 10<<20+1<<10 {
			t.Fatalf("huge line has %d bytes", len(line))
		}
		var m struct {
			Params struct {
				Update struct {
					Content struct{ Text string } `json:"content"`
				} `json:"update"`
			} `json:"params"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil || len(m.Params.Update.Content.Text) < 10<<20 {
			t.Fatalf("huge line does not decode as a chunk: %v", err)
		}
		h.expect(stopLine(2, "end_turn"))
		h.send(prompt(3, "ref-1", "#huge-line 300"))
		if line := h.next(); len(line) != 300 || !json.Valid([]byte(line)) {
			t.Fatalf("300-byte line: %d bytes", len(line))
		}
		h.expect(stopLine(3, "end_turn"))
	})
	t.Run("fs-call", func(t *testing.T) {
		t.Parallel()
		h := openSession(t)
		h.send(prompt(2, "ref-1", "#fs-call"))
		h.expect(`{"jsonrpc":"2.0","id":0,"method":"fs/read_text_file","params":{"limit":10,"line":1,"path":"/tmp/acpdrive-reference.txt","sessionId":"ref-1"}}`)
		h.send(`{"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"Method not found","data":{"method":"fs/read_text_file"}}}`)
		h.expect(chunk("ref-1", "report-1-1", "fs/read_text_file answer: error -32601 Method not found"), stopLine(2, "end_turn"))
	})
	t.Run("elicitation", func(t *testing.T) {
		t.Parallel()
		h := openSession(t)
		h.send(prompt(2, "ref-1", "#elicitation"))
		h.expect(
			chunk("ref-1", "m-1", "I need to ask you something."),
			`{"jsonrpc":"2.0","id":0,"method":"elicitation/create","params":{"sessionId":"ref-1","mode":"form","message":"Which branch should I push to?","requestedSchema":`+string(defaultRequestSchema)+`}}`,
		)
		h.send(`{"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"Method not found"}}`)
		h.expect(chunk("ref-1", "report-1-1", "elicitation outcome: error -32601 Method not found"))
		h.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"ref-1"}}`)
		h.expect(stopLine(2, "cancelled"))
	})
	t.Run("between-turns", func(t *testing.T) {
		t.Parallel()
		h := openSession(t, "--scenario", "string-ids")
		h.send(prompt(2, "ref-1", "#between-turns"))
		h.expect(
			chunk("ref-1", "m-1", "This turn ends now."),
			stopLine(2, "end_turn"),
			chunk("ref-1", "between", "An update between turns."),
			`{"jsonrpc":"2.0","id":"r-0","method":"session/request_permission","params":{"sessionId":"ref-1","toolCall":{"toolCallId":"call-between","title":"Push to origin","kind":"execute"},"options":[{"optionId":"allow-once","name":"Allow once","kind":"allow_once"},{"optionId":"allow-always","name":"Always allow","kind":"allow_always"}]}}`,
		)
		// The next turn may start while the between-turns request is open.
		h.send(prompt(3, "ref-1", "next"))
		h.expect(chunk("ref-1", "m-2", "next"), stopLine(3, "end_turn"))
		h.send(`{"jsonrpc":"2.0","id":"r-0","result":{"outcome":{"outcome":"cancelled"}}}`)
		h.expect(chunk("ref-1", "report-1-1", "permission outcome: cancelled"))
	})
	t.Run("crash", func(t *testing.T) {
		t.Parallel()
		h := openSession(t)
		h.send(prompt(2, "ref-1", "#crash"))
		if code := h.wait(); code != 3 {
			t.Fatalf("exit code %d, want 3", code)
		}
		got := h.rest()
		want := []string{chunk("ref-1", "m-1", "Working on it… "), chunk("ref-1", "m-1", "still working… ")}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("stdout %q", got)
		}
		if !strings.Contains(h.stderr.String(), "crashed on purpose") {
			t.Fatalf("stderr %q", h.stderr.String())
		}
	})
	t.Run("slow-accept", func(t *testing.T) {
		t.Parallel()
		h := openSession(t)
		h.send(prompt(2, "ref-1", "#slow-accept 300"))
		h.expect(stopLine(2, "end_turn"))
	})
	t.Run("unknown turn name runs the default turn", func(t *testing.T) {
		t.Parallel()
		h := openSession(t)
		h.send(prompt(2, "ref-1", "#nosuchturn hi"))
		h.expect(chunk("ref-1", "m-1", "#nosuchturn hi"), stopLine(2, "end_turn"))
	})
	t.Run("two-messages", func(t *testing.T) {
		t.Parallel()
		h := openSession(t)
		h.send(prompt(2, "ref-1", "#two-messages"))
		h.expect(
			chunk("ref-1", "msg-a", "The first m"),
			chunk("ref-1", "msg-a", "essage, in t"),
			chunk("ref-1", "msg-a", "hree chunks."),
			chunk("ref-1", "msg-b", "The second messag"),
			chunk("ref-1", "msg-b", "e, in two chunks."),
			stopLine(2, "end_turn"),
		)
	})
}

func TestSessionLifecycle(t *testing.T) {
	t.Run("close exits after answering", func(t *testing.T) {
		t.Parallel()
		h := openSession(t, "--scenario", "close")
		h.send(`{"jsonrpc":"2.0","id":5,"method":"session/close","params":{"sessionId":"ref-1"}}`)
		h.expect(`{"jsonrpc":"2.0","id":5,"result":{}}`)
		if code := h.wait(); code != 0 {
			t.Fatalf("exit code %d", code)
		}
	})
	t.Run("close cancels the running turn", func(t *testing.T) {
		t.Parallel()
		h := openSession(t)
		h.send(prompt(2, "ref-1", "#wait-cancel"))
		h.expect(chunk("ref-1", "m-1", "Waiting for a cancel."))
		h.send(`{"jsonrpc":"2.0","id":5,"method":"session/close","params":{"sessionId":"ref-1"}}`)
		got := []string{h.next(), h.next()}
		if !contains(got, `{"jsonrpc":"2.0","id":5,"result":{}}`) || !contains(got, stopLine(2, "cancelled")) {
			t.Fatalf("got %q", got)
		}
	})
	t.Run("load replays", func(t *testing.T) {
		t.Parallel()
		h := startAgent(t, "--scenario", "load")
		h.send(`{"jsonrpc":"2.0","id":3,"method":"session/load","params":{"sessionId":"old-1","cwd":"/tmp","mcpServers":[]}}`)
		h.expect(
			update("old-1", `{"sessionUpdate":"user_message_chunk","messageId":"replay-user","content":{"type":"text","text":"(replayed prompt)"}}`),
			chunk("old-1", "replay-agent", "(replayed answer)"),
			`{"jsonrpc":"2.0","id":3,"result":{}}`,
		)
		h.send(prompt(4, "old-1", "after load"))
		h.expect(chunk("old-1", "m-1", "after load"), stopLine(4, "end_turn"))
	})
	t.Run("load-error", func(t *testing.T) {
		t.Parallel()
		h := startAgent(t, "--scenario", "load-error")
		h.send(`{"jsonrpc":"2.0","id":3,"method":"session/load","params":{"sessionId":"old-1","cwd":"/tmp","mcpServers":[]}}`)
		h.expect(`{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"No previous sessions found for this project."}}`)
	})
	t.Run("resume", func(t *testing.T) {
		t.Parallel()
		h := startAgent(t, "--scenario", "resume")
		h.send(`{"jsonrpc":"2.0","id":3,"method":"session/resume","params":{"sessionId":"old-2","cwd":"/tmp","mcpServers":[]}}`)
		h.expect(`{"jsonrpc":"2.0","id":3,"result":{}}`)
	})
	t.Run("ext-null", func(t *testing.T) {
		t.Parallel()
		h := startAgent(t, "--scenario", "ext-null")
		h.send(`{"jsonrpc":"2.0","id":3,"method":"_sortie.dev/probe/unimplemented","params":{}}`)
		h.expect(`{"jsonrpc":"2.0","id":3,"result":null}`)
	})
	t.Run("ignore-eof", func(t *testing.T) {
		t.Parallel()
		h := startAgent(t, "--scenario", "ignore-eof")
		_ = h.in.Close()
		select {
		case code := <-h.done:
			t.Fatalf("exited with %d after stdin ended", code)
		case <-time.After(100 * time.Millisecond):
		}
		// Now only a scripted exit, a signal or the context ends it.
		h.cancel()
		if code := h.wait(); code != 0 {
			t.Fatalf("exit code %d", code)
		}
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestMetaTurnEchoesTheMeta: #meta answers with the prompt's _meta as one
// message, "{}" when the prompt carries none.
func TestMetaTurnEchoesTheMeta(t *testing.T) {
	t.Parallel()
	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	cases := []struct {
		name, meta, want string
	}{
		{"trace context", `{"traceparent":"` + tp + `","tracestate":"k=v"}`, `{"traceparent":"` + tp + `","tracestate":"k=v"}`},
		{"absent", "", "{}"},
		{"null", "null", "{}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := openSession(t)
			meta := ""
			if c.meta != "" {
				meta = `,"_meta":` + c.meta
			}
			h.send(`{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"ref-1","prompt":[{"type":"text","text":"#meta"}]` + meta + `}}`)
			h.expect(chunk("ref-1", "m-1", c.want), stopLine(2, "end_turn"))
		})
	}
}
