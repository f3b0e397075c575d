package refagent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

// Script is the whole behaviour of one reference-agent process. A named
// scenario (--scenario) is a built-in Script; a script file (--script) is a
// Script encoded as one JSON object. Every field is optional: the zero Script
// behaves like the "echo" scenario without its named turns.
type Script struct {
	// Name identifies the script in diagnostics.
	Name string `json:"name,omitempty"`
	// Description says what the script is for.
	Description string `json:"description,omitempty"`

	// Initialize overrides the answer to the initialize request.
	Initialize *Initialize `json:"initialize,omitempty"`

	// Methods scripts the answers to requests other than initialize,
	// session/prompt and session/cancel, keyed by method name (for example
	// "session/new", "session/load", "session/close", "_vendor/probe"). A key
	// ending in "*" matches every method with that prefix ("_*" matches all
	// extension methods); an exact key wins over a prefix, a longer prefix
	// over a shorter one. The n-th call of a method uses the n-th Reply of its
	// list; the last Reply repeats once the list is used up.
	Methods map[string][]Reply `json:"methods,omitempty"`

	// Startup lists steps run once when the process starts, before the first
	// line of stdin is read (no session is known: updates carry an empty
	// sessionId unless the step names one).
	Startup []Step `json:"startup,omitempty"`

	// DefaultTurn names the entry of Turns run for a prompt that does not
	// start with "#NAME" (or names an unknown turn). Empty means the built-in
	// echo turn.
	DefaultTurn string `json:"defaultTurn,omitempty"`

	// Turns are the named turns, selected by a prompt whose first text block
	// starts with "#NAME".
	Turns map[string]*Turn `json:"turns,omitempty"`

	// Cancel is how a running turn reacts to session/cancel (or to a
	// $/cancel_request naming the prompt); a Turn may override it. One of
	// [CancelRespond] (the default), [CancelError] or [CancelIgnore].
	Cancel string `json:"cancel,omitempty"`

	// StdinEOF is what the process does when stdin ends: [EOFExit] (the
	// default: return exit code 0 at once) or [EOFKeepRunning] (go on until an
	// exit step, a signal or the caller's context ends it).
	StdinEOF string `json:"stdinEOF,omitempty"`

	// IgnoreSigterm makes the process survive SIGTERM (as --ignore-sigterm).
	IgnoreSigterm bool `json:"ignoreSigterm,omitempty"`

	// StringRequestIDs makes the agent's own requests carry string ids
	// ("r-0", "r-1", …) instead of integers (0, 1, …).
	StringRequestIDs bool `json:"stringRequestIds,omitempty"`

	// SessionConfig makes sessions offer modes, options and models and
	// keep them per session; see ConfigOffer.
	SessionConfig *ConfigOffer `json:"sessionConfig,omitempty"`

	// Steering advertises _meta.steering.supported in initialize and
	// answers _session/steering: a steer for a session whose turn runs is
	// handed to that turn (see [StepWaitSteer]) and answered
	// {"outcome":"injected"}; otherwise {"outcome":"promptRequired",
	// "reason":"noRunningTurn"}. Without it the method is unknown.
	Steering bool `json:"steering,omitempty"`

	// UsageRunningTotal makes every usage a turn ends with (a stop step's,
	// the "usage-wire" turn's argument's) the session's running total, as
	// some runtimes report it: the agent adds the turn's counters to what
	// the session reported before and answers the sums. Each session keeps
	// its own total; a usage that is not an object of numbers is answered
	// as it is, and counts for nothing.
	UsageRunningTotal bool `json:"usageRunningTotal,omitempty"`
}

// Cancel modes of [Script.Cancel] and [Turn.Cancel].
const (
	// CancelRespond stops the turn's pending steps, abandons any request the
	// turn is waiting on, runs the turn's OnCancel steps and answers the
	// prompt {"stopReason":"cancelled"}.
	CancelRespond = "respond"
	// CancelError is CancelRespond, but the prompt is answered with the
	// JSON-RPC error -32800 "Request cancelled".
	CancelError = "error"
	// CancelIgnore leaves the turn running as if nothing arrived; only a
	// waitCancel step notices the cancel (and returns).
	CancelIgnore = "ignore"
)

// Values of [Script.StdinEOF].
const (
	// EOFExit ends the process with exit code 0 when stdin ends.
	EOFExit = "exit"
	// EOFKeepRunning keeps the process alive after stdin ends.
	EOFKeepRunning = "keepRunning"
)

// Initialize scripts the answer to the initialize request. Fields left empty
// keep the default answer:
//
//	{"protocolVersion":1,
//	 "agentCapabilities":{"loadSession":false,"promptCapabilities":{},"mcpCapabilities":{"http":false,"sse":false}},
//	 "agentInfo":{"name":"acpdrive-reference-agent","title":"acpdrive reference agent","version":Version},
//	 "authMethods":[]}
//
// The embedded Reply adds a delay, steps, an error, an exit or silence; its
// Result, when set, replaces the whole answer.
type Initialize struct {
	// ProtocolVersion replaces the answered protocolVersion (1).
	ProtocolVersion *int `json:"protocolVersion,omitempty"`
	// AgentInfo replaces the agentInfo object (raw JSON).
	AgentInfo json.RawMessage `json:"agentInfo,omitempty"`
	// OmitAgentInfo leaves agentInfo out of the answer altogether.
	OmitAgentInfo bool `json:"omitAgentInfo,omitempty"`
	// AgentCapabilities replaces the agentCapabilities object (raw JSON),
	// e.g. {"loadSession":true,"sessionCapabilities":{"close":{}}}. The agent's
	// defaults for session/load, session/resume and session/list follow what
	// it advertises here.
	AgentCapabilities json.RawMessage `json:"agentCapabilities,omitempty"`
	// AuthMethods replaces the authMethods array (raw JSON).
	AuthMethods json.RawMessage `json:"authMethods,omitempty"`

	Reply
}

// Reply scripts how the agent answers one request. Its actions happen in this
// order: wait DelayMs; run Before; then exactly one of Exit (the process ends
// without answering), Never (no answer is ever sent), Error, Result, or the
// method's default answer; then run After; then ExitAfter. A Reply with only
// the answer fields set is answered at once on the reading goroutine, so it
// keeps its place in the order of the wire; any delay or step moves it to a
// goroutine of its own, and later requests are read meanwhile.
type Reply struct {
	// DelayMs waits this many milliseconds before doing anything else.
	DelayMs int `json:"delayMs,omitempty"`
	// Before lists steps run before the answer (e.g. session/load's replay).
	Before []Step `json:"before,omitempty"`
	// Exit ends the process instead of answering.
	Exit *Exit `json:"exit,omitempty"`
	// Never sends no answer at all.
	Never bool `json:"never,omitempty"`
	// Error answers with this JSON-RPC error.
	Error *RPCError `json:"error,omitempty"`
	// Result answers with this raw JSON result (any JSON value). For
	// session/new, a "sessionId" string inside it becomes the session's id.
	Result json.RawMessage `json:"result,omitempty"`
	// After lists steps run right after the answer.
	After []Step `json:"after,omitempty"`
	// ExitAfter ends the process after the answer and the After steps.
	ExitAfter *Exit `json:"exitAfter,omitempty"`
}

// immediate reports whether the reply can be carried out on the reading
// goroutine: it neither waits nor runs steps.
func (r *Reply) immediate() bool {
	return r.DelayMs <= 0 && len(r.Before) == 0 && len(r.After) == 0
}

// Exit ends the reference-agent process: Stderr is written to standard error
// as given (include the newlines and any ANSI colour codes you want), stdout
// is closed to further writes and [Main] returns Code.
type Exit struct {
	// Code is the exit code (0–255).
	Code int `json:"code"`
	// Stderr is written to standard error before exiting.
	Stderr string `json:"stderr,omitempty"`
}

// RPCError is a JSON-RPC 2.0 error object.
type RPCError struct {
	// Code is the JSON-RPC error code, e.g. -32000 or -32603.
	Code int `json:"code"`
	// Message is the error text.
	Message string `json:"message"`
	// Data is optional raw JSON detail.
	Data json.RawMessage `json:"data,omitempty"`
}

// Turn is the behaviour of one session/prompt.
//
// Steps run in order. Before a response step (stop, error, result,
// noResponse) has run, the turn is running: session/cancel acts on it and
// sleeps, waits and outstanding requests are interrupted. A response step
// answers the prompt; the steps after it still run, "between turns", and
// session/cancel no longer reaches them. When the steps run out before any
// response step, the prompt is answered {"stopReason":"end_turn"}.
type Turn struct {
	// Description says what the turn demonstrates.
	Description string `json:"description,omitempty"`
	// Cancel overrides [Script.Cancel] for this turn.
	Cancel string `json:"cancel,omitempty"`
	// CancelRequests makes the agent send $/cancel_request for each of its
	// own requests abandoned because the turn was cancelled.
	CancelRequests bool `json:"cancelRequests,omitempty"`
	// Steps are the turn's steps.
	Steps []Step `json:"steps"`
	// OnCancel lists steps run once the turn is cancelled (modes respond and
	// error), before the cancelled answer. A response step among them answers
	// the prompt instead (e.g. a stop with end_turn after a cancel).
	OnCancel []Step `json:"onCancel,omitempty"`
	// Next names the turn that replaces this one, once it has run, for
	// every later prompt that selects it (by name or as the default turn):
	// a prompt sent again gets another answer (a failure, then a success).
	// Empty: the turn stays.
	Next string `json:"next,omitempty"`
	// Accept, on an ACP v2 connection only, replaces the prompt's
	// acceptance: Never leaves the prompt unanswered (no user_message, no
	// running) and Error refuses it with that error; either way the turn's
	// steps do not run. Only those two fields are read. v1 ignores it.
	Accept *Reply `json:"accept,omitempty"`
}

// PermissionOption is one option of a session/request_permission request.
type PermissionOption struct {
	// OptionID is the id the client answers with.
	OptionID string `json:"optionId"`
	// Name is the human-readable label.
	Name string `json:"name"`
	// Kind is allow_once, allow_always, reject_once or reject_always.
	Kind string `json:"kind"`
}

// Step kinds: the values of [Step.Step].
const (
	StepText              = "text"              // agent_message_chunk(s): text, messageId, chunks, chunkSize, session
	StepEcho              = "echo"              // the prompt text (or argument) as agent_message_chunks: of, chunkSize, messageId
	StepThought           = "thought"           // agent_thought_chunk(s): text, messageId, chunks, chunkSize
	StepUserText          = "userText"          // user_message_chunk(s): text, messageId, chunks, chunkSize
	StepToolCall          = "toolCall"          // tool_call: toolCallId, title, kind, status, content, locations, rawInput
	StepToolCallUpdate    = "toolCallUpdate"    // tool_call_update: toolCallId, status, title, kind, content, locations, rawOutput
	StepPlan              = "plan"              // plan: entries
	StepAvailableCommands = "availableCommands" // available_commands_update: availableCommands
	StepCurrentMode       = "currentMode"       // current_mode_update: modeId
	StepConfigOptions     = "configOptions"     // config_option_update: configOptions
	StepSessionInfo       = "sessionInfo"       // session_info_update: title, updatedAt
	StepUsage             = "usage"             // usage_update: used, size, cost
	StepUpdate            = "update"            // any raw update object: update
	StepPermission        = "permission"        // session/request_permission: toolCall|toolCallId/title/kind, options, report, noWait
	StepElicitation       = "elicitation"       // elicitation/create: mode, message, requestedSchema, params, report, noWait
	StepRequest           = "request"           // any agent→client request: method, params, report, noWait
	StepRaw               = "raw"               // a raw line (garbage): line
	StepHugeLine          = "hugeLine"          // one session/update line of exactly bytes bytes: bytes, fromArgument
	StepSleep             = "sleep"             // wait: ms, fromArgument
	StepBurst             = "burst"             // count identical agent_message_chunks, fast: count, text, messageId, fromArgument
	StepStderr            = "stderr"            // write text to stderr
	StepExit              = "exit"              // end the process: code, stderr
	StepSpawn             = "spawn"             // start a descendant holding stdout/stderr: command
	StepDaemon            = "daemon"            // start a daemonized descendant (own session, no stdio): command
	StepWriteFile         = "writeFile"         // write text to a file and report the outcome: path, text, fromArgument
	StepWaitCancel        = "waitCancel"        // wait until the turn is cancelled
	StepWaitSteer         = "waitSteer"         // wait for a steer (Script.Steering), then send "steered: TEXT" as an agent message
	StepStop              = "stop"              // answer the prompt {"stopReason":…}: stopReason, usage, meta, fromArgument
	StepError             = "error"             // answer the prompt with a JSON-RPC error: error
	StepResult            = "result"            // answer the prompt with a raw result: result
	StepNoResponse        = "noResponse"        // never answer the prompt
	StepMCPCall           = "mcpCall"           // call a tool of a stdio MCP server declared in session/new: mcpServer, mcpTool, mcpArguments
)

// stepKinds lists every step kind; responseKinds those that answer a prompt.
var (
	stepKinds = []string{
		StepText, StepEcho, StepThought, StepUserText, StepToolCall, StepToolCallUpdate,
		StepPlan, StepAvailableCommands, StepCurrentMode, StepConfigOptions, StepSessionInfo,
		StepUsage, StepUpdate, StepPermission, StepElicitation, StepRequest, StepRaw,
		StepHugeLine, StepSleep, StepBurst, StepStderr, StepExit, StepSpawn, StepWaitCancel, StepWaitSteer,
		StepDaemon, StepWriteFile, StepStop, StepError, StepResult, StepNoResponse, StepMCPCall,
	}
	responseKinds = map[string]bool{StepStop: true, StepError: true, StepResult: true, StepNoResponse: true}
)

// Step is one action of a turn, of a Reply or of the Startup list. Step
// names the kind (the Step* constants); the other fields are read only by the
// kinds that use them (listed beside each constant and in
// docs/reference-agent.md). Raw JSON fields are copied to the wire as given.
//
// Defaults: messageId "m-<turn>" for text/echo/burst/hugeLine, "t-<turn>" for
// thought, "u-<turn>" for userText (an explicit "" omits the messageId);
// echo chunkSize 16; toolCall title "Tool call <toolCallId>"; stop
// stopReason "end_turn"; sleep ms 0; burst count 1000 and text "x"; hugeLine
// bytes 10 MiB + 1 KiB; spawn command ["sleep","60"]; permission options
// allow-once/allow-always/reject-once/reject-always. A fromArgument step
// reads its number (ms, count, bytes) from the turn's argument when that
// parses as an integer.
type Step struct {
	// Step is the kind of step.
	Step string `json:"step"`

	// Session addresses an update to this sessionId instead of the turn's.
	Session string `json:"session,omitempty"`

	// Text is the chunk text (text, thought, userText, burst) or the bytes
	// written to stderr (stderr).
	Text string `json:"text,omitempty"`
	// MessageID is the chunks' messageId; nil means the default, "" omits it.
	MessageID *string `json:"messageId,omitempty"`
	// Chunks splits the text into this many chunks of about equal length.
	Chunks int `json:"chunks,omitempty"`
	// ChunkSize splits the text into chunks of at most this many bytes
	// (never inside a UTF-8 sequence).
	ChunkSize int `json:"chunkSize,omitempty"`
	// Of selects what echo repeats: "prompt" (all text blocks joined by
	// "\n", the default), "argument" (the text after "#NAME") or "meta"
	// (the prompt's _meta object as compact JSON, "{}" when it has none).
	Of string `json:"of,omitempty"`

	// ToolCallID is the toolCallId of toolCall/toolCallUpdate, and of the
	// default toolCall of a permission request.
	ToolCallID string `json:"toolCallId,omitempty"`
	// Title is the tool call's title, or the session title of sessionInfo.
	Title string `json:"title,omitempty"`
	// Kind is the tool kind (any string; empty leaves it out).
	Kind string `json:"kind,omitempty"`
	// Status is the tool call status (pending, in_progress, completed,
	// failed, or anything else).
	Status string `json:"status,omitempty"`
	// Content is the tool call content array.
	Content json.RawMessage `json:"content,omitempty"`
	// Locations is the tool call locations array.
	Locations json.RawMessage `json:"locations,omitempty"`
	// RawInput is the tool call's rawInput.
	RawInput json.RawMessage `json:"rawInput,omitempty"`
	// RawOutput is the tool call update's rawOutput.
	RawOutput json.RawMessage `json:"rawOutput,omitempty"`

	// MCPServer names the stdio MCP server of the last session/new's
	// mcpServers an mcpCall step starts (the step starts it, completes
	// initialize, calls the tool and stops it); MCPTool is the tool and
	// MCPArguments its arguments (a JSON object). The tool's answer is
	// reported as an agent_thought_chunk "mcpCall <tool> ok|error: <text>",
	// so the reply is left alone.
	MCPServer    string          `json:"mcpServer,omitempty"`
	MCPTool      string          `json:"mcpTool,omitempty"`
	MCPArguments json.RawMessage `json:"mcpArguments,omitempty"`
	// MCPArgumentsFromSchema, with no MCPArguments, makes the arguments
	// the smallest value the tool's input schema (from tools/list)
	// accepts: each required property, a string of the shortest length
	// allowed, the smallest number, the first enum value, … (the
	// result-tool scenario: a result for any --output-schema).
	MCPArgumentsFromSchema bool `json:"mcpArgumentsFromSchema,omitempty"`

	// Entries is the plan's entries array.
	Entries json.RawMessage `json:"entries,omitempty"`
	// AvailableCommands is the available_commands_update array.
	AvailableCommands json.RawMessage `json:"availableCommands,omitempty"`
	// ModeID is current_mode_update's currentModeId.
	ModeID string `json:"modeId,omitempty"`
	// ConfigOptions is config_option_update's configOptions array.
	ConfigOptions json.RawMessage `json:"configOptions,omitempty"`
	// UpdatedAt is session_info_update's updatedAt.
	UpdatedAt string `json:"updatedAt,omitempty"`
	// Used is usage_update's used token count.
	Used uint64 `json:"used,omitempty"`
	// Size is usage_update's context-window size.
	Size uint64 `json:"size,omitempty"`
	// Cost is usage_update's cost object.
	Cost json.RawMessage `json:"cost,omitempty"`
	// Update is the raw update object of an update step, sent as
	// params.update (e.g. {"sessionUpdate":"notice",…}).
	Update json.RawMessage `json:"update,omitempty"`

	// Method is the method of a request step.
	Method string `json:"method,omitempty"`
	// Params is the request's params. For a request step, an object without
	// "sessionId" gets the turn's sessionId added; for elicitation it
	// replaces the generated params verbatim.
	Params json.RawMessage `json:"params,omitempty"`
	// ToolCall is the permission request's toolCall object, verbatim.
	ToolCall json.RawMessage `json:"toolCall,omitempty"`
	// Options are the permission request's options.
	Options []PermissionOption `json:"options,omitempty"`
	// Message is the elicitation message.
	Message string `json:"message,omitempty"`
	// Mode is the elicitation mode ("form" by default).
	Mode string `json:"mode,omitempty"`
	// RequestedSchema is the form elicitation's requestedSchema.
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	// Report makes the agent emit, once the answer arrives, an
	// agent_message_chunk (messageId "report-<turn>-<k>") saying what it got:
	// "permission outcome: selected <optionId>", "permission outcome:
	// cancelled", "elicitation outcome: <action>", "<method> answer: result
	// <json>", or "<label>: error <code> <message>".
	Report bool `json:"report,omitempty"`
	// NoWait sends the request and goes on without waiting for the answer
	// (the answer is still logged).
	NoWait bool `json:"noWait,omitempty"`

	// Line is the raw line of a raw step, written followed by "\n".
	Line string `json:"line,omitempty"`
	// Bytes is the length of a hugeLine line, newline excluded.
	Bytes int `json:"bytes,omitempty"`
	// Ms is a sleep's duration in milliseconds.
	Ms int `json:"ms,omitempty"`
	// Count is the number of chunks of a burst.
	Count int `json:"count,omitempty"`
	// FromArgument takes ms/count/bytes from the turn's argument.
	FromArgument bool `json:"fromArgument,omitempty"`
	// Code is an exit step's exit code.
	Code int `json:"code,omitempty"`
	// Stderr is written to stderr by an exit step before exiting.
	Stderr string `json:"stderr,omitempty"`
	// Command is the argv of a spawn or daemon step.
	Command []string `json:"command,omitempty"`
	// Path is the file a writeFile step writes (with fromArgument: the
	// turn's argument, when not empty, instead).
	Path string `json:"path,omitempty"`

	// StopReason is a stop step's stopReason (any string).
	StopReason string `json:"stopReason,omitempty"`
	// Meta is a stop step's result _meta object.
	Meta json.RawMessage `json:"meta,omitempty"`
	// Usage is a stop step's result usage object (ACP's end-turn token
	// usage: inputTokens, outputTokens, cachedReadTokens,
	// cachedWriteTokens, thoughtTokens, totalTokens), verbatim. A stop step
	// with fromArgument reads the turn's argument as a [UsageReport]
	// instead.
	Usage json.RawMessage `json:"usage,omitempty"`
	// Error is an error step's JSON-RPC error (default -32603 "Internal error").
	Error *RPCError `json:"error,omitempty"`
	// Result is a result step's raw result (e.g. 42, which no client can decode).
	Result json.RawMessage `json:"result,omitempty"`
}

// UsageReport is the argument of a stop step with fromArgument (the
// built-in turn "usage-wire"): the usage its answer carries and, when Used,
// Size or Cost is set, a usage_update sent before the answer. An argument
// that is not such a JSON object leaves the step's own fields in force.
type UsageReport struct {
	// Usage is the result's usage object, verbatim.
	Usage json.RawMessage `json:"usage,omitempty"`
	// Used and Size are the usage_update's context figures.
	Used uint64 `json:"used,omitempty"`
	Size uint64 `json:"size,omitempty"`
	// Cost is the usage_update's cumulative cost object.
	Cost json.RawMessage `json:"cost,omitempty"`
	// Meta is the result's _meta object.
	Meta json.RawMessage `json:"meta,omitempty"`
}

// ParseScript decodes a JSON script and validates it. Unknown fields are
// errors, so a misspelt field name does not pass silently.
func ParseScript(data []byte) (*Script, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Script
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("parse script: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("parse script: trailing data after the script object")
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// LoadScriptFile reads and parses a JSON script file.
func LoadScriptFile(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read script: %w", err)
	}
	s, err := ParseScript(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Marshal encodes the script as indented JSON, the format ParseScript reads.
func (s *Script) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Validate checks the script for unknown step kinds, misplaced response
// steps, unknown modes, dangling turn names and invalid raw JSON.
func (s *Script) Validate() error {
	var errs []string
	bad := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }

	if !validCancel(s.Cancel) {
		bad("cancel: unknown mode %q (want respond, error or ignore)", s.Cancel)
	}
	switch s.StdinEOF {
	case "", EOFExit, EOFKeepRunning:
	default:
		bad("stdinEOF: unknown value %q (want exit or keepRunning)", s.StdinEOF)
	}
	if s.DefaultTurn != "" && s.Turns[s.DefaultTurn] == nil {
		bad("defaultTurn: no turn named %q", s.DefaultTurn)
	}
	if in := s.Initialize; in != nil {
		checkRaw(bad, "initialize.agentInfo", in.AgentInfo)
		checkRaw(bad, "initialize.agentCapabilities", in.AgentCapabilities)
		checkRaw(bad, "initialize.authMethods", in.AuthMethods)
		checkReply(bad, "initialize", &in.Reply)
	}
	for _, m := range sortedKeys(s.Methods) {
		switch m {
		case "", "initialize", "session/prompt", "session/cancel":
			bad("methods: %q cannot be scripted here", m)
		}
		if len(s.Methods[m]) == 0 {
			bad("methods[%q]: empty reply list", m)
		}
		for i := range s.Methods[m] {
			checkReply(bad, fmt.Sprintf("methods[%q][%d]", m, i), &s.Methods[m][i])
		}
	}
	checkSteps(bad, "startup", s.Startup, false)
	for _, name := range sortedKeys(s.Turns) {
		t := s.Turns[name]
		where := fmt.Sprintf("turns[%q]", name)
		if t == nil {
			bad("%s: null turn", where)
			continue
		}
		if name == "" || strings.ContainsAny(name, " \t\r\n") {
			bad("%s: a turn name must be non-empty and contain no white space", where)
		}
		if !validCancel(t.Cancel) {
			bad("%s.cancel: unknown mode %q", where, t.Cancel)
		}
		checkSteps(bad, where+".steps", t.Steps, true)
		checkSteps(bad, where+".onCancel", t.OnCancel, true)
		if t.Next != "" && s.Turns[t.Next] == nil {
			bad("%s.next: no turn named %q", where, t.Next)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid script: %s", strings.Join(errs, "; "))
	}
	return nil
}

func validCancel(m string) bool {
	switch m {
	case "", CancelRespond, CancelError, CancelIgnore:
		return true
	}
	return false
}

func checkReply(bad func(string, ...any), where string, r *Reply) {
	n := 0
	if r.Exit != nil {
		n++
		checkExit(bad, where+".exit", r.Exit)
	}
	if r.Never {
		n++
	}
	if r.Error != nil {
		n++
		checkRaw(bad, where+".error.data", r.Error.Data)
	}
	if r.Result != nil {
		n++
		checkRaw(bad, where+".result", r.Result)
	}
	if n > 1 {
		bad("%s: at most one of exit, never, error and result", where)
	}
	if r.ExitAfter != nil {
		checkExit(bad, where+".exitAfter", r.ExitAfter)
	}
	if r.DelayMs < 0 {
		bad("%s.delayMs: negative", where)
	}
	checkSteps(bad, where+".before", r.Before, false)
	checkSteps(bad, where+".after", r.After, false)
}

func checkExit(bad func(string, ...any), where string, e *Exit) {
	if e.Code < 0 || e.Code > 255 {
		bad("%s.code: %d is outside 0..255", where, e.Code)
	}
}

func checkSteps(bad func(string, ...any), where string, steps []Step, inTurn bool) {
	known := make(map[string]bool, len(stepKinds))
	for _, k := range stepKinds {
		known[k] = true
	}
	for i := range steps {
		st := &steps[i]
		at := fmt.Sprintf("%s[%d]", where, i)
		if !known[st.Step] {
			bad("%s: unknown step kind %q", at, st.Step)
			continue
		}
		if responseKinds[st.Step] && !inTurn {
			bad("%s: %s answers a prompt and may only appear in a turn", at, st.Step)
		}
		for name, raw := range map[string]json.RawMessage{
			"content": st.Content, "locations": st.Locations, "rawInput": st.RawInput,
			"rawOutput": st.RawOutput, "entries": st.Entries, "availableCommands": st.AvailableCommands,
			"configOptions": st.ConfigOptions, "cost": st.Cost, "update": st.Update, "params": st.Params,
			"toolCall": st.ToolCall, "requestedSchema": st.RequestedSchema, "meta": st.Meta, "result": st.Result,
		} {
			checkRaw(bad, at+"."+name, raw)
		}
		switch st.Step {
		case StepRequest:
			if st.Method == "" {
				bad("%s: a request step needs a method", at)
			}
		case StepUpdate:
			if st.Update == nil {
				bad("%s: an update step needs an update object", at)
			}
		case StepRaw:
			if strings.Contains(st.Line, "\n") {
				bad("%s: a raw line must not contain a newline (use several raw steps)", at)
			}
		case StepExit:
			checkExit(bad, at, &Exit{Code: st.Code})
		case StepEcho:
			switch st.Of {
			case "", "prompt", "argument", "meta":
			default:
				bad("%s.of: unknown value %q (want prompt, argument or meta)", at, st.Of)
			}
		case StepError:
			if st.Error != nil {
				checkRaw(bad, at+".error.data", st.Error.Data)
			}
		}
		if st.Chunks < 0 || st.ChunkSize < 0 || st.Count < 0 || st.Bytes < 0 || st.Ms < 0 {
			bad("%s: negative number", at)
		}
	}
}

func checkRaw(bad func(string, ...any), where string, raw json.RawMessage) {
	if raw != nil && !json.Valid(raw) {
		bad("%s: not valid JSON", where)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// nameAgent makes the initialize answer report agentInfo.name name
// (--agent-name): the script's agentInfo, or the default one, with its
// name replaced. A script that omits agentInfo still omits it.
func (s *Script) nameAgent(name string) {
	if s.Initialize == nil {
		s.Initialize = &Initialize{}
	}
	info := map[string]json.RawMessage{}
	if raw := s.Initialize.AgentInfo; raw == nil || json.Unmarshal(raw, &info) != nil || info == nil {
		info = map[string]json.RawMessage{}
		info["title"], _ = json.Marshal(AgentTitle)
		info["version"], _ = json.Marshal(Version)
	}
	info["name"], _ = json.Marshal(name)
	s.Initialize.AgentInfo, _ = json.Marshal(info)
}
