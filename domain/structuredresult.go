package domain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// The sources of a structured result (docs/behaviour.md#structured-results).
const (
	// ResultSourceTool: the model called acpdrive's submit_result tool.
	ResultSourceTool = "tool"
	// ResultSourceReply: the result is the last JSON object of the reply.
	ResultSourceReply = "reply"
)

// The reasons of a missing result (TurnResult.ResultMissing).
const (
	// MsgResultNoJSON: the agent's last message held no JSON object.
	MsgResultNoJSON = "the reply holds no JSON object"
	// MsgResultInvalidPrefix begins the reason of a result that did not
	// validate; the validator's text follows.
	MsgResultInvalidPrefix = "the result does not validate: "
	// MsgResultNoReply: the turn produced no message at all.
	MsgResultNoReply = "the turn produced no reply"
)

// ResultInstruction is the instruction appended to every prompt of a
// session with an output schema (docs/behaviour.md#structured-results):
// the result is to be delivered as one JSON object at the end of the
// reply. schema is the schema's JSON text.
func ResultInstruction(schema []byte) string {
	return "\n\n[acpdrive] When you have finished, end your reply with the result as one JSON object " +
		"in a fenced code block marked json, valid against this JSON Schema:\n" + string(bytes.TrimSpace(schema))
}

// ResultInstructionFallback follows ResultToolInstruction: the reply's
// way, for a model that cannot reach the tool.
func ResultInstructionFallback(schema []byte) string {
	return " If you cannot call it, end your reply with the result as one JSON object " +
		"in a fenced code block marked json, valid against this JSON Schema:\n" + string(bytes.TrimSpace(schema))
}

// ResultFollowUpNotice is the message of the result_follow_up event that
// opens follow-up n of max: why the turn before delivered no result.
func ResultFollowUpNotice(n, max int, why string) string {
	return "follow-up " + strconv.Itoa(n) + " of " + strconv.Itoa(max) + ": " + why
}

// ResultFollowUp is the follow-up prompt of a turn that ended without a
// valid result; why is the reason (TurnResult.ResultMissing), tool whether
// the result tool is declared.
func ResultFollowUp(why string, tool bool) string {
	ask := "Reply now with the result only, as one JSON object in a fenced code block marked json."
	if tool {
		ask = "Call the tool " + ResultToolName + " now with the result (or, if you cannot, reply with it as one JSON object in a fenced code block marked json)."
	}
	return "[acpdrive] Your last reply did not deliver the result (" + why + "). " + ask
}

// ReplyJSON returns the result a reply carries
// (docs/behaviour.md#structured-results): the content of its last fenced
// code block that holds a JSON object, else the last JSON object found
// in its text (the last '{' from which a whole object decodes). ok is
// false when there is none.
func ReplyJSON(reply string) (json.RawMessage, bool) {
	if v, ok := lastFencedObject(reply); ok {
		return v, true
	}
	return lastObject(reply)
}

// lastFencedObject is the last ``` block whose content is a JSON object.
func lastFencedObject(reply string) (json.RawMessage, bool) {
	parts := strings.Split(reply, "```")
	// parts at odd indexes are inside a fence.
	for i := len(parts) - 1; i >= 1; i-- {
		if i%2 == 0 {
			continue
		}
		body := parts[i]
		if nl := strings.IndexByte(body, '\n'); nl >= 0 && !strings.HasPrefix(strings.TrimSpace(body), "{") {
			body = body[nl+1:] // the info string (json, JSON, …)
		}
		if v, ok := wholeObject(body); ok {
			return v, true
		}
	}
	return nil, false
}

// lastObject is the last top-level JSON object of text: from each '{',
// left to right, an object that decodes is kept and the scan goes on after
// its end; the last one kept wins.
func lastObject(text string) (json.RawMessage, bool) {
	var last json.RawMessage
	for i := 0; i < len(text); {
		j := strings.IndexByte(text[i:], '{')
		if j < 0 {
			break
		}
		i += j
		dec := json.NewDecoder(strings.NewReader(text[i:]))
		var raw json.RawMessage
		if err := dec.Decode(&raw); err == nil && isObject(raw) {
			last = raw
			i += int(dec.InputOffset())
			continue
		}
		i++
	}
	if last == nil {
		return nil, false
	}
	return compact(last), true
}

// wholeObject is s when it is exactly one JSON object (space around it
// allowed).
func wholeObject(s string) (json.RawMessage, bool) {
	raw := json.RawMessage(strings.TrimSpace(s))
	if !json.Valid(raw) || !isObject(raw) {
		return nil, false
	}
	return compact(raw), true
}

func isObject(raw json.RawMessage) bool {
	return len(raw) > 0 && bytes.TrimSpace(raw)[0] == '{'
}

func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}

// ResultServerName is the name of the stdio MCP server acpdrive declares
// for the result tool (docs/behaviour.md#structured-results); an
// operator's MCP configuration may not declare it while a schema is set.
const ResultServerName = "acpdrive-result"

// ResultToolName is the one tool the result server offers.
const ResultToolName = "submit_result"

// ResultToolDescription is the result tool's description, written so that
// models call it.
const ResultToolDescription = "Submit the final, structured result of your work. Call this exactly once when you have finished, " +
	"with arguments that match the input schema. If the call is answered with validation errors, correct the arguments and call it again."

// ResultToolInstruction is the instruction appended to every prompt when
// the result server is declared (docs/behaviour.md#structured-results).
const ResultToolInstruction = "\n\n[acpdrive] When you have finished, deliver the result by calling the tool " +
	ResultToolName + " (MCP server " + ResultServerName + ") with arguments valid against its input schema."

// ResultToolTitles are the titles runtimes give a call of acpdrive's
// result tool, as measured (docs/runtimes.md#structured-results-per-runtime):
// Claude Code's mcp__<server>__<tool> (also the tool's name in Qwen Code),
// Gemini CLI's and Qwen Code's "<tool> (<server> MCP Server)", codex-acp
// 2.x's mcp.<server>.<tool> and codex-acp 0.16's "Tool: <server>/<tool>".
var ResultToolTitles = [...]string{
	"mcp__" + ResultServerName + "__" + ResultToolName,
	ResultToolName + " (" + ResultServerName + " MCP Server)",
	ResultToolTitleExecute,
	"Tool: " + ResultServerName + "/" + ResultToolName,
}

// ResultToolTitleExecute is codex-acp 2.x's title of the result tool's
// call, which it reports, as every MCP tool call, with kind execute: the
// one title under which an execute request can be the result tool's.
const ResultToolTitleExecute = "mcp." + ResultServerName + "." + ResultToolName

// ByResultTool is PermissionDecision.By of the one exception to the
// permission posture: acpdrive's own result tool
// (docs/behaviour.md#structured-results).
const ByResultTool = "result_tool"

// IsResultToolRequest reports whether r asks to call acpdrive's own
// result tool: its title is exactly one of ResultToolTitles (the server
// name acpdrive chose and the tool name, together), its kind is other or
// absent (execute only under ResultToolTitleExecute). Anything else is
// not. The paths and command a request seems to name are not looked at:
// they are read from its arguments, which for the result tool are the
// result itself (a schema may well have "files" or "path"), never acted
// on. A runtime whose request carries
// another title (codex-acp's none or "Approve MCP tool call", Qwen Code's
// the arguments) is judged with the title its tool call was announced
// with (docs/behaviour.md#structured-results).
func IsResultToolRequest(r PermissionRequest) bool {
	title := strings.TrimSpace(r.Title)
	switch r.Kind {
	case ToolOther:
	case ToolExecute:
		return title == ResultToolTitleExecute
	default:
		return false
	}
	for _, t := range ResultToolTitles {
		if title == t {
			return true
		}
	}
	return false
}

// ResultTurns says which turns of a session under an output schema ask
// for the result (agent.output_schema_turns, --output-schema-turns;
// docs/behaviour.md#structured-results).
type ResultTurns string

// The result turns.
const (
	// ResultTurnsEach: every turn asks for the result (the default; ""
	// means it).
	ResultTurnsEach ResultTurns = "each"
	// ResultTurnsLast: only the turn the caller marks as the last asks
	// for it (app.Session.TurnWithResult; the CLI's last prompt). The
	// turns before it carry no instruction and have no result and no
	// ResultMissing.
	ResultTurnsLast ResultTurns = "last"
)

// CheckOutputSchemaTurnsInvalid: agent.output_schema_turns is neither
// each nor last.
const CheckOutputSchemaTurnsInvalid = "agent.output_schema_turns.invalid"

// ParseResultTurns reads agent.output_schema_turns /
// --output-schema-turns as written ("" is ResultTurnsEach).
func ParseResultTurns(s string) (ResultTurns, error) {
	switch ResultTurns(s) {
	case "", ResultTurnsEach:
		return ResultTurnsEach, nil
	case ResultTurnsLast:
		return ResultTurnsLast, nil
	}
	return "", fmt.Errorf("output_schema_turns %q is neither each nor last", s)
}

// EachTurn reports whether every turn asks for the result: false for
// ResultTurnsLast only (a value ParseResultTurns refuses, which Validate
// reports, reads as the default).
func (r ResultTurns) EachTurn() bool {
	return r != ResultTurnsLast
}

// resultTurnsFindings is the finding of an output_schema_turns that is
// neither each nor last; nil otherwise.
func resultTurnsFindings(s string) []Finding {
	if _, err := ParseResultTurns(s); err != nil {
		return []Finding{{Severity: SeverityError, Check: CheckOutputSchemaTurnsInvalid, Message: "agent." + err.Error()}}
	}
	return nil
}

// MsgResultNotAsked answers a call of the result tool in a turn that does
// not ask for the result (under ResultTurnsLast, a turn before the last);
// the call is not recorded (docs/behaviour.md#structured-results).
const MsgResultNotAsked = "not recorded: this turn does not ask for the result; call " + ResultToolName +
	" when a prompt asks for it"
