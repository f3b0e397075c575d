package refagent

import (
	"encoding/json"
	"strconv"
)

// DefaultScenario is the scenario served when neither --scenario nor
// --script is given.
const DefaultScenario = "echo"

// toolKinds are the ten ToolKind values of ACP v1.
var toolKinds = []string{"read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"}

// allowOnly are permission options with no refusing option.
func allowOnly() []PermissionOption {
	return []PermissionOption{
		{OptionID: "allow-once", Name: "Allow once", Kind: "allow_once"},
		{OptionID: "allow-always", Name: "Always allow", Kind: "allow_always"},
	}
}

func text(s string) Step { return Step{Step: StepText, Text: s} }

func stop(reason string) Step { return Step{Step: StepStop, StopReason: reason} }

// defaultWireUsage is the usage the "usage-wire" turn reports by default.
const defaultWireUsage = `{"inputTokens":1733,"outputTokens":61,"cachedReadTokens":1009,"cachedWriteTokens":211,"totalTokens":3014}`

// ansiStartupStderr is what exit-before-init writes: coloured, like a
// runtime's own crash banner.
const ansiStartupStderr = "\x1b[1;31merror:\x1b[0m reference agent failed to start\n" +
	"\x1b[33mhint:\x1b[0m this exit is scripted (scenario exit-before-init)\n"

// builtinTurns returns the named turns every built-in scenario carries, so
// that "#NAME" prompts reach them whatever the scenario.
func builtinTurns() map[string]*Turn {
	turns := map[string]*Turn{
		"echo": {
			Description: "Echo the prompt text back in chunks of about 16 bytes (messageId m-<turn>), then end_turn.",
			Steps:       []Step{{Step: StepEcho}},
		},
		"tools": toolsTurn(),
		"submit-result": {
			Description: "Call submit_result of acpdrive's result server (acpdrive-result) with the smallest value its input schema accepts, say \"Submitted the result.\", end_turn.",
			Steps: []Step{{Step: StepMCPCall, MCPServer: "acpdrive-result", MCPTool: "submit_result", MCPArgumentsFromSchema: true},
				text("Submitted the result."), stop("end_turn")},
		},
		"await-steer": {
			Description: "Say \"Waiting for a steer.\", wait for a steer (_session/steering, with Script.Steering), send \"steered: TEXT\", end_turn.",
			Steps:       []Step{text("Waiting for a steer."), {Step: StepWaitSteer}},
		},
		"usage-wire": {
			Description: "A chunk, then end_turn with a usage object in the result (the Claude adapter's figures: " + defaultWireUsage +
				"); an argument {\"usage\":…,\"used\":…,\"size\":…,\"cost\":…,\"meta\":…} replaces the usage and sends a usage_update first.",
			Steps: []Step{text("Measured answer."), {Step: StepStop, Usage: json.RawMessage(defaultWireUsage), FromArgument: true}},
		},
		"meta": {
			Description: "Echo the prompt's _meta object (compact JSON, {} when it has none) as one agent message (messageId m-<turn>), then end_turn.",
			Steps:       []Step{{Step: StepEcho, Of: "meta", Chunks: 1}},
		},
		"unannounced-tool": {
			Description: "tool_call_update in_progress then completed for a toolCallId never announced by a tool_call, then end_turn.",
			Steps: []Step{
				{Step: StepToolCallUpdate, ToolCallID: "ghost-1", Status: "in_progress", Kind: "execute"},
				{Step: StepToolCallUpdate, ToolCallID: "ghost-1", Status: "completed", Title: "ghost finished"},
			},
		},
		"permission-refusable": {
			Description: "session/request_permission with allow_once, allow_always, reject_once and reject_always; reports the outcome, continues, end_turn.",
			Steps: []Step{
				text("I need to edit a file."),
				{Step: StepPermission, ToolCallID: "call-perm", Title: "Edit /tmp/acpdrive-reference.txt", Kind: "edit", Report: true},
				{Step: StepText, Text: "Continuing after the permission answer.", MessageID: strPtr("m-after")},
				stop("end_turn"),
			},
		},
		"permission-no-reject": {
			Description: "session/request_permission offering only allow options (a client that cannot allow answers cancelled); reports the outcome, then waits for session/cancel.",
			Steps: []Step{
				text("I need to run a command."),
				{Step: StepPermission, ToolCallID: "call-perm", Title: "Run rm -rf build", Kind: "execute", Options: allowOnly(), Report: true},
				{Step: StepWaitCancel},
			},
		},
		"elicitation": {
			Description: "elicitation/create (form mode); reports the answer, then waits for session/cancel.",
			Steps: []Step{
				text("I need to ask you something."),
				{Step: StepElicitation, Message: "Which branch should I push to?", Report: true},
				{Step: StepWaitCancel},
			},
		},
		"question": {
			Description: "elicitation/create (form mode: branch, a required string; force, a boolean defaulting to false); reports the answer's action, says \"Going on.\" and ends end_turn: --answers works on the built-in agent.",
			Steps: []Step{
				text("I need to ask you something. "),
				{Step: StepElicitation, Message: "Which branch should I push to?", Report: true,
					RequestedSchema: json.RawMessage(`{"type":"object","title":"Push target","properties":{"branch":{"type":"string"},"force":{"type":"boolean","default":false}},"required":["branch"]}`)},
				text("Going on."),
			},
		},
		"updates": {
			Description: "thought, plan, the five session-state updates between two chunks of one message, an informational chunk (_meta.claudeCode.kind), an _auth/status_update notification, a notice, a state_update (unknown variant), a tool call whose terminal update carries no title, an image chunk, an update for another session, then end_turn.",
			Steps: []Step{
				{Step: StepThought, Text: "Thinking about the task."},
				{Step: StepPlan},
				text("Before the session-state updates. "),
				{Step: StepAvailableCommands},
				{Step: StepCurrentMode, ModeID: "code"},
				{Step: StepConfigOptions},
				{Step: StepSessionInfo, Title: "Reference session", UpdatedAt: "2026-01-01T00:00:00Z"},
				{Step: StepUsage, Used: 53000, Size: 200000, Cost: json.RawMessage(`{"amount":0.045,"currency":"USD"}`)},
				text("After the session-state updates."),
				{Step: StepUpdate, Update: json.RawMessage(`{"sessionUpdate":"agent_message_chunk","messageId":"m-1","content":{"type":"text","text":"Claude Code is running in a sandbox."},"_meta":{"claudeCode":{"kind":"informational"}}}`)},
				{Step: StepRaw, Line: `{"jsonrpc":"2.0","method":"_auth/status_update","params":{"authStatus":{"kind":"api_key","label":"Anthropic API key","detail":"ANTHROPIC_API_KEY"}}}`},
				{Step: StepUpdate, Update: json.RawMessage(`{"sessionUpdate":"notice","severity":"warning","title":"MCP server down"}`)},
				{Step: StepUpdate, Update: json.RawMessage(`{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}`)},
				{Step: StepToolCall, ToolCallID: "call-read", Title: "Read README.md", Kind: "read", Status: "pending"},
				{Step: StepToolCallUpdate, ToolCallID: "call-read", Status: "completed"},
				{Step: StepUpdate, Update: json.RawMessage(`{"sessionUpdate":"agent_message_chunk","messageId":"img","content":{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}}`)},
				{Step: StepText, Text: "for another session", Session: "other-session"},
				stop("end_turn"),
			},
		},
		"user-chunk": {
			Description: "A user_message_chunk between two agent messages, then end_turn.",
			Steps: []Step{
				text("First agent message."),
				{Step: StepUserText, Text: "A user message."},
				{Step: StepText, Text: "Second agent message.", MessageID: strPtr("m-second")},
			},
		},
		"two-messages": {
			Description: "Two agent messages with different messageIds, each in several chunks, then end_turn.",
			Steps: []Step{
				{Step: StepText, Text: "The first message, in three chunks.", Chunks: 3, MessageID: strPtr("msg-a")},
				{Step: StepText, Text: "The second message, in two chunks.", Chunks: 2, MessageID: strPtr("msg-b")},
			},
		},
		"long-message": {
			Description: "One 600-rune message in 10 chunks (longer than a 500-rune cap), then end_turn.",
			Steps:       []Step{{Step: StepText, Text: repeatRune('é', 600), Chunks: 10}},
		},
		"between-turns": {
			Description: "end_turn, then (between turns) an agent_message_chunk and a permission request with no reject option; reports its outcome.",
			Steps: []Step{
				text("This turn ends now."),
				stop("end_turn"),
				{Step: StepSleep, Ms: 50},
				{Step: StepText, Text: "An update between turns.", MessageID: strPtr("between")},
				{Step: StepPermission, ToolCallID: "call-between", Title: "Push to origin", Kind: "execute", Options: allowOnly(), Report: true},
			},
		},
		"crash": {
			Description: "Two chunks, then the process writes to stderr and exits 3 mid-turn.",
			Steps: []Step{
				text("Working on it… "),
				text("still working… "),
				{Step: StepExit, Code: 3, Stderr: "fatal: reference agent crashed on purpose (scenario crash)\n"},
			},
		},
		"orphan-stdout": {
			Description: "A chunk, then spawns `sleep 60` holding stdout and stderr, then exits 0 mid-turn.",
			Steps: []Step{
				text("Spawning a helper."),
				{Step: StepSpawn, Command: []string{"sleep", "60"}},
				{Step: StepExit, Code: 0},
			},
		},
		"huge-line": {
			Description: "One session/update line of 10 MiB + 1 KiB (or the argument's byte count), then end_turn on a normal line.",
			Steps: []Step{
				{Step: StepHugeLine, FromArgument: true},
				stop("end_turn"),
			},
		},
		"garbage": {
			Description: "Non-JSON lines on stdout, then a chunk and end_turn.",
			Steps: []Step{
				{Step: StepRaw, Line: "this line is not JSON"},
				{Step: StepRaw, Line: `{"jsonrpc":"2.0","method":"session/update","params":`},
				{Step: StepRaw, Line: "\x1b[32mcoloured progress output\x1b[0m"},
				text("Still here after the garbage."),
				stop("end_turn"),
			},
		},
		"slow-accept": {
			Description: "Answers the prompt only after a delay: the argument in ms, else 2000 ms; then end_turn.",
			Steps: []Step{
				{Step: StepSleep, Ms: 2000, FromArgument: true},
				stop("end_turn"),
			},
		},
		"burst": {
			Description: "N identical agent_message_chunk notifications as fast as possible (N = argument, default 1000), then end_turn.",
			Steps: []Step{
				{Step: StepBurst, Count: 1000, FromArgument: true},
				stop("end_turn"),
			},
		},
		"fs-call": {
			Description: "Calls fs/read_text_file (a client that advertised no fs answers an error), reports the answer, end_turn.",
			Steps: []Step{
				{Step: StepRequest, Method: "fs/read_text_file", Params: json.RawMessage(`{"path":"/tmp/acpdrive-reference.txt","line":1,"limit":10}`), Report: true},
				stop("end_turn"),
			},
		},
		"terminal-call": {
			Description: "Calls terminal/create (a client that advertised no terminal answers an error), reports the answer, end_turn.",
			Steps: []Step{
				{Step: StepRequest, Method: "terminal/create", Params: json.RawMessage(`{"command":"make","args":["test"]}`), Report: true},
				stop("end_turn"),
			},
		},
		"wait-cancel": {
			Description: "A chunk, then waits until session/cancel; answers {\"stopReason\":\"cancelled\"}.",
			Steps:       []Step{text("Waiting for a cancel."), {Step: StepWaitCancel}},
		},
		"cancel-error": {
			Description: "A chunk, then waits until session/cancel; answers the prompt with error -32800.",
			Cancel:      CancelError,
			Steps:       []Step{text("Waiting for a cancel."), {Step: StepWaitCancel}},
		},
		"cancel-ignore": {
			Description: "Ignores session/cancel: waits for it, keeps going for 100 ms, then answers end_turn.",
			Cancel:      CancelIgnore,
			Steps: []Step{
				text("Waiting for a cancel."),
				{Step: StepWaitCancel},
				{Step: StepSleep, Ms: 100},
				{Step: StepText, Text: "Ignored the cancel.", MessageID: strPtr("m-ignored")},
				stop("end_turn"),
			},
		},
		"cancel-updates": {
			Description: "Waits until session/cancel, then sends two more updates before answering cancelled.",
			Steps:       []Step{text("Waiting for a cancel."), {Step: StepWaitCancel}},
			OnCancel: []Step{
				{Step: StepText, Text: "Cleaning up after the cancel.", MessageID: strPtr("m-cleanup")},
				{Step: StepToolCallUpdate, ToolCallID: "call-cleanup", Status: "failed", Title: "cancelled"},
			},
		},
		"prompt-error": {
			Description: "Answers the prompt with JSON-RPC error -32603.",
			Steps:       []Step{{Step: StepError, Error: &RPCError{Code: codeInternalError, Message: "Internal error: scripted failure"}}},
		},
		"bad-result": {
			Description: "Answers the prompt with \"result\":42, which does not decode as a PromptResponse.",
			Steps:       []Step{{Step: StepResult, Result: json.RawMessage("42")}},
		},
		"no-response": {
			Description: "Never answers the prompt (not even after session/cancel); sends one chunk.",
			Steps:       []Step{{Step: StepNoResponse}, text("I will never answer.")},
		},
		"stderr-noise": {
			Description: "Writes ANSI-coloured lines to stderr, a chunk, end_turn.",
			Steps: []Step{
				{Step: StepStderr, Text: "\x1b[2m[debug]\x1b[0m loading model\n\x1b[33m[warn]\x1b[0m cache is cold\n"},
				text("Done."),
			},
		},
	}
	for _, reason := range []string{"end_turn", "refusal", "max_tokens", "max_turn_requests", "cancelled"} {
		turns["stop-"+reason] = &Turn{
			Description: "A chunk, then stopReason " + reason + ".",
			Steps:       []Step{text("Stopping with " + reason + "."), stop(reason)},
		}
	}
	turns["stop-unknown"] = &Turn{
		Description: "A chunk, then the unknown stopReason \"paused\".",
		Steps:       []Step{text("Stopping with paused."), stop("paused")},
	}
	for name, t := range childTurns() {
		turns[name] = t
	}
	// Provider failures, one turn per class (refagent/failures.go).
	for name, t := range failureTurns() {
		turns[name] = t
	}
	return turns
}

func repeatRune(r rune, n int) string {
	rs := make([]rune, n)
	for i := range rs {
		rs[i] = r
	}
	return string(rs)
}

// toolsTurn announces one tool call of every ToolKind plus an unknown kind;
// each goes pending → in_progress → completed, except execute, which fails.
func toolsTurn() *Turn {
	var steps []Step
	kinds := append(append([]string(nil), toolKinds...), "teleport")
	for i, kind := range kinds {
		id := "call-" + strconv.Itoa(i+1)
		status, title := "completed", kind+" finished"
		if kind == "execute" {
			status, title = "failed", "execute failed: exit status 1"
		}
		steps = append(steps,
			Step{Step: StepToolCall, ToolCallID: id, Title: "Run " + kind + " tool", Kind: kind, Status: "pending"},
			Step{Step: StepToolCallUpdate, ToolCallID: id, Status: "in_progress"},
			Step{Step: StepToolCallUpdate, ToolCallID: id, Status: status, Title: title,
				Content: json.RawMessage(`[{"type":"content","content":{"type":"text","text":"` + title + `"}}]`)},
		)
	}
	steps = append(steps, stop("end_turn"))
	return &Turn{
		Description: "A tool_call of each of the ten kinds plus the unknown kind \"teleport\" (ids call-1…call-11), each pending → in_progress → completed, except execute (call-6) which fails; then end_turn.",
		Steps:       steps,
	}
}

// baseScript is the default script: every named turn, default echo.
func baseScript(name, description string) *Script {
	return &Script{Name: name, Description: description, Turns: builtinTurns()}
}

type scenario struct {
	description string
	build       func(s *Script)
}

func ptrInt(n int) *int { return &n }

// startupScenarios are the scenarios that change more than the default turn.
var startupScenarios = map[string]scenario{
	"session-config": sessionConfigScenario(),
	"session-modes":  sessionModesScenario(),
	"steering": {"Advertises _meta.steering.supported and answers _session/steering; the default turn says \"Waiting for a steer.\", waits for one (waitSteer), sends \"steered: TEXT\" and ends end_turn.", func(s *Script) {
		s.Steering = true
		s.DefaultTurn = "await-steer"
	}},
	"result-tool-http": resultToolHTTP, // refagent/mcphttp.go
	"result-tool": {"The default turn reports through acpdrive's result tool: it calls submit_result of the stdio MCP server acpdrive-result (declared by acpdrive under --output-schema) with the smallest value the tool's input schema accepts (mcpArgumentsFromSchema), says \"Submitted the result.\" and ends end_turn: --output-schema works on the built-in agent.", func(s *Script) {
		s.DefaultTurn = "submit-result"
	}},
	"wrong-version": {"initialize answers protocolVersion 2.", func(s *Script) {
		s.Initialize = &Initialize{ProtocolVersion: ptrInt(2)}
	}},
	"unsupported-version": {"Answers initialize with error -32022 \"Unsupported protocol version\", data {\"requested\":1,\"supported\":[2]} (a runtime that speaks only ACP v2).", func(s *Script) {
		s.Initialize = &Initialize{Reply: Reply{Error: &RPCError{Code: -32022, Message: "Unsupported protocol version", Data: json.RawMessage(`{"requested":1,"supported":[2]}`)}}}
	}},
	"advertise-all": {"Advertises what today's Claude and Codex adapters do: every session capability (systemPrompt, title, subagents among them), auth {logout}, providers, _meta keys, two auth methods; session/new answers modes, configOptions and models, then sends available_commands_update; session/delete answers {}.", func(s *Script) {
		s.Initialize = &Initialize{
			AgentCapabilities: json.RawMessage(`{"loadSession":true,"promptCapabilities":{"image":true,"embeddedContext":true},"mcpCapabilities":{"http":true,"sse":false},` +
				`"sessionCapabilities":{"additionalDirectories":{},"close":{},"delete":{},"fork":{},"list":{},"resume":{},"systemPrompt":{"mode":{"override":{}}},"title":{},"subagents":{}},` +
				`"auth":{"logout":{}},"providers":{},"_meta":{"claudeCode":{"promptQueueing":true},"authStatus":{"kind":"api_key"}}}`),
			AuthMethods: json.RawMessage(`[{"id":"api-key","name":"API key","description":"Use an API key from the environment"},{"id":"chat-gpt","name":"ChatGPT"}]`),
		}
		s.Methods = map[string][]Reply{"session/new": {{
			Result: json.RawMessage(`{"sessionId":"ref-1","modes":{"currentModeId":"default","availableModes":[{"id":"default","name":"Manual","description":"Always ask"},{"id":"auto","name":"Auto"}]},` +
				`"configOptions":[{"id":"mode","name":"Mode","category":"mode","type":"select","currentValue":"default","options":[{"value":"default","name":"Manual"},{"value":"auto","name":"Auto"}]},` +
				`{"id":"fast","name":"Fast","category":"model_config","type":"boolean","currentValue":false}],` +
				`"models":{"currentModelId":"opus","availableModels":[{"modelId":"opus","name":"Opus"},{"modelId":"haiku","name":"Haiku"}]}}`),
			After: []Step{{Step: StepAvailableCommands, AvailableCommands: json.RawMessage(`[{"name":"compact","description":"Compact the conversation"},{"name":"review"}]`)}},
		}}}
	}},
	"exit-before-init": {"On initialize, writes ANSI-coloured lines to stderr and exits 7 without answering.", func(s *Script) {
		s.Initialize = &Initialize{Reply: Reply{Exit: &Exit{Code: 7, Stderr: ansiStartupStderr}}}
	}},
	"no-agent-info": {"initialize answers without agentInfo.", func(s *Script) {
		s.Initialize = &Initialize{OmitAgentInfo: true}
	}},
	"hang-init": {"Never answers initialize.", func(s *Script) {
		s.Initialize = &Initialize{Reply: Reply{Never: true}}
	}},
	"slow-init": {"Answers initialize after 2 s.", func(s *Script) {
		s.Initialize = &Initialize{Reply: Reply{DelayMs: 2000}}
	}},
	"init-error": {"Answers initialize with error -32603.", func(s *Script) {
		s.Initialize = &Initialize{Reply: Reply{Error: &RPCError{Code: codeInternalError, Message: "Internal error: scripted initialize failure"}}}
	}},
	"multi-session": {"Advertises sessionCapabilities.close and keeps running when a session closes: many sessions on one process; session/new sends available_commands_update right after its answer.", func(s *Script) {
		s.Initialize = &Initialize{AgentCapabilities: json.RawMessage(`{"loadSession":false,"promptCapabilities":{},"mcpCapabilities":{"http":false,"sse":false},"sessionCapabilities":{"close":{}}}`)}
		s.Methods = map[string][]Reply{"session/new": {{After: []Step{{Step: StepAvailableCommands, AvailableCommands: json.RawMessage(`[{"name":"compact"}]`)}}}}}
	}},
	"usage-running-total": {"As multi-session, and every usage a turn ends with is the session's running total (usageRunningTotal): each session adds its turn's counters to its own total and reports the sums. The default turn is usage-wire; name the runtime with --agent-name.", func(s *Script) {
		s.Initialize = &Initialize{AgentCapabilities: json.RawMessage(`{"loadSession":false,"promptCapabilities":{},"mcpCapabilities":{"http":false,"sse":false},"sessionCapabilities":{"close":{}}}`)}
		s.UsageRunningTotal = true
		s.DefaultTurn = "usage-wire"
	}},
	"multi-session-early-requests": {"As multi-session, and session/new sends a request naming the new session before its answer (_test/early, waited for) and a session/request_permission naming it right after (not waited for).", func(s *Script) {
		s.Initialize = &Initialize{AgentCapabilities: json.RawMessage(`{"loadSession":false,"promptCapabilities":{},"mcpCapabilities":{"http":false,"sse":false},"sessionCapabilities":{"close":{}}}`)}
		s.Methods = map[string][]Reply{"session/new": {{
			Before: []Step{{Step: StepRequest, Method: "_test/early"}},
			After:  []Step{{Step: StepPermission, ToolCallID: "early", NoWait: true}},
		}}}
	}},
	"close": {"Advertises sessionCapabilities.close; answers session/close {} and exits 0 right after.", func(s *Script) {
		s.Initialize = &Initialize{AgentCapabilities: json.RawMessage(`{"loadSession":false,"promptCapabilities":{},"mcpCapabilities":{"http":false,"sse":false},"sessionCapabilities":{"close":{}}}`)}
		s.Methods = map[string][]Reply{"session/close": {{ExitAfter: &Exit{Code: 0}}}}
	}},
	"delete": {"Advertises sessionCapabilities.delete and close; answers session/delete {} and exits 0 right after.", func(s *Script) {
		s.Initialize = &Initialize{AgentCapabilities: json.RawMessage(`{"loadSession":false,"promptCapabilities":{},"mcpCapabilities":{"http":false,"sse":false},"sessionCapabilities":{"close":{},"delete":{}}}`)}
		s.Methods = map[string][]Reply{"session/delete": {{ExitAfter: &Exit{Code: 0}}}}
	}},
	"full-caps": {"Advertises loadSession, http MCP and sessionCapabilities list, resume, close, delete; load replays, resume answers {}.", func(s *Script) {
		s.Initialize = &Initialize{AgentCapabilities: json.RawMessage(`{"loadSession":true,"promptCapabilities":{"image":true,"embeddedContext":true},"mcpCapabilities":{"http":true,"sse":false},"sessionCapabilities":{"list":{},"resume":{},"close":{},"delete":{}}}`)}
	}},
	"load": {"Advertises loadSession; session/load replays a user and an agent chunk, then answers {}.", func(s *Script) {
		s.Initialize = &Initialize{AgentCapabilities: json.RawMessage(`{"loadSession":true,"promptCapabilities":{},"mcpCapabilities":{"http":false,"sse":false}}`)}
	}},
	"load-no-replay": {"Advertises loadSession; session/load answers {} without replaying anything.", func(s *Script) {
		s.Initialize = &Initialize{AgentCapabilities: json.RawMessage(`{"loadSession":true,"promptCapabilities":{},"mcpCapabilities":{"http":false,"sse":false}}`)}
		s.Methods = map[string][]Reply{"session/load": {{Result: json.RawMessage(`{}`)}}}
	}},
	"load-error": {"Advertises loadSession; session/load answers -32603 \"No previous sessions found for this project.\".", func(s *Script) {
		s.Initialize = &Initialize{AgentCapabilities: json.RawMessage(`{"loadSession":true,"promptCapabilities":{},"mcpCapabilities":{"http":false,"sse":false}}`)}
		s.Methods = map[string][]Reply{"session/load": {{Error: &RPCError{Code: codeInternalError, Message: "No previous sessions found for this project."}}}}
	}},
	"resume": {"Advertises sessionCapabilities.resume; session/resume answers {}.", func(s *Script) {
		s.Initialize = &Initialize{AgentCapabilities: json.RawMessage(`{"loadSession":false,"promptCapabilities":{},"mcpCapabilities":{"http":false,"sse":false},"sessionCapabilities":{"resume":{}}}`)}
	}},
	"resume-error": {"Advertises sessionCapabilities.resume; session/resume answers -32002 \"Resource not found\".", func(s *Script) {
		s.Initialize = &Initialize{AgentCapabilities: json.RawMessage(`{"loadSession":false,"promptCapabilities":{},"mcpCapabilities":{"http":false,"sse":false},"sessionCapabilities":{"resume":{}}}`)}
		s.Methods = map[string][]Reply{"session/resume": {{Error: &RPCError{Code: -32002, Message: "Resource not found"}}}}
	}},
	"auth-required": {"session/new answers -32000 \"Authentication required\".", func(s *Script) {
		s.Methods = map[string][]Reply{"session/new": {{Error: &RPCError{Code: -32000, Message: "Authentication required"}}}}
	}},
	"new-exit": {"session/new makes the process write to stderr and exit 1 without answering.", func(s *Script) {
		s.Methods = map[string][]Reply{"session/new": {{Exit: &Exit{Code: 1, Stderr: "fatal: cannot create a session (scenario new-exit)\n"}}}}
	}},
	"slow-new": {"Answers session/new after 2 s.", func(s *Script) {
		s.Methods = map[string][]Reply{"session/new": {{DelayMs: 2000}}}
	}},
	"commands-after-new": {"Sends available_commands_update for the new session right after answering session/new.", func(s *Script) {
		s.Methods = map[string][]Reply{"session/new": {{After: []Step{{Step: StepAvailableCommands}}}}}
	}},
	"ext-null": {"Answers every _-prefixed request with \"result\":null (like legacy Rust SDK agents).", func(s *Script) {
		s.Methods = map[string][]Reply{"_*": {{Result: json.RawMessage("null")}}}
	}},
	"string-ids": {"The agent's own requests carry string ids (\"r-0\", …).", func(s *Script) {
		s.StringRequestIDs = true
	}},
	"ignore-sigterm": {"Survives SIGTERM (as --ignore-sigterm); stdin end still exits 0.", func(s *Script) {
		s.IgnoreSigterm = true
	}},
	"ignore-eof": {"Keeps running after stdin ends (exit only by signal).", func(s *Script) {
		s.StdinEOF = EOFKeepRunning
	}},
	"stubborn": {"Ignores both SIGTERM and stdin end: only SIGKILL ends it.", func(s *Script) {
		s.IgnoreSigterm = true
		s.StdinEOF = EOFKeepRunning
	}},
}

// Scenario returns a fresh copy of the built-in script called name. Every
// built-in script carries all named turns; a turn name used as a scenario
// name makes that turn the default turn.
func Scenario(name string) (*Script, bool) {
	if name == DefaultScenario {
		return baseScript(name, "Echo every prompt back; every named turn is reachable with #NAME."), true
	}
	if sc, ok := startupScenarios[name]; ok {
		s := baseScript(name, sc.description)
		sc.build(s)
		return s, true
	}
	turns := builtinTurns()
	if t, ok := turns[name]; ok {
		s := baseScript(name, "Every prompt runs turn "+name+": "+t.Description)
		s.DefaultTurn = name
		return s, true
	}
	return nil, false
}

// ScenarioNames lists every built-in scenario name, sorted.
func ScenarioNames() []string {
	seen := map[string]bool{DefaultScenario: true}
	for n := range startupScenarios {
		seen[n] = true
	}
	for n := range builtinTurns() {
		seen[n] = true
	}
	return sortedKeys(seen)
}

// TurnNames lists the named turns of the built-in scripts, sorted.
func TurnNames() []string { return sortedKeys(builtinTurns()) }
