package refagent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

var (
	// errCancelled: the running turn was cancelled by the client.
	errCancelled = errors.New("refagent: turn cancelled")
	// errShutdown: the agent is stopping (exit, stdin end, signal) or stdout is gone.
	errShutdown = errors.New("refagent: agent shutting down")
	// errExit: an exit step ended the process.
	errExit = errors.New("refagent: exit step")
)

// ctxErr names why a step's context ended: the agent stopping, or the turn
// being cancelled.
func (a *agent) ctxErr() error {
	if a.ctx.Err() != nil {
		return errShutdown
	}
	return errCancelled
}

// turnRun is one session/prompt in progress.
type turnRun struct {
	sess      *session
	id        json.RawMessage // the prompt's request id
	n         int             // process-wide turn number, from 1
	def       *Turn
	mode      string
	ctx       context.Context // ends on cancel (unless mode ignore) and on shutdown
	cancelCtx context.CancelFunc
	cancelled chan struct{} // closed when a cancel arrives, in every mode
	steers    chan string   // steers handed to the turn (Script.Steering)

	// Guarded by agent.mu.
	responded       bool
	cancelRequested bool
	viaRequest      bool
}

// stepCtx is what a step knows about where it runs.
type stepCtx struct {
	session string
	turn    int
	prompt  string // all text blocks of the prompt, joined by "\n"
	arg     string // the text after "#NAME" (the whole prompt for a default turn)
	meta    string // the prompt's _meta object as compact JSON, "{}" when it has none
	t       *turnRun
	reports int
	// forceRespond lets response steps answer a cancelled turn (OnCancel).
	forceRespond bool
}

// builtinEcho is the default turn when the script names none.
var builtinEcho = &Turn{
	Description: "Echo the prompt text back in chunks of about 16 bytes, then end_turn.",
	Steps:       []Step{{Step: StepEcho}},
}

func (a *agent) handlePrompt(m *inMsg) {
	var p struct {
		SessionID *string           `json:"sessionId"`
		Prompt    []json.RawMessage `json:"prompt"`
		Meta      json.RawMessage   `json:"_meta"`
	}
	if err := json.Unmarshal(orEmpty(m.Params), &p); err != nil || p.SessionID == nil || p.Prompt == nil {
		a.writeResponse(m.ID, nil, invalidParams("session/prompt needs a string sessionId and a prompt array"))
		return
	}
	var texts []string
	first, haveFirst := "", false
	for _, raw := range p.Prompt {
		var b struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(raw, &b) != nil || b.Type != "text" {
			continue
		}
		texts = append(texts, b.Text)
		if !haveFirst {
			first, haveFirst = b.Text, true
		}
	}
	prompt := strings.Join(texts, "\n")
	def, arg := a.selectTurn(first, prompt)
	def = a.follow(def)

	a.mu.Lock()
	s := a.sessions[*p.SessionID]
	if s == nil {
		a.mu.Unlock()
		a.writeResponse(m.ID, nil, invalidParams(fmt.Sprintf("unknown sessionId %q", *p.SessionID)))
		return
	}
	if s.turn != nil {
		a.mu.Unlock()
		a.writeResponse(m.ID, nil, &RPCError{Code: codeInternalError, Message: "a turn is already running in this session"})
		return
	}
	a.turns++
	mode := def.Cancel
	if mode == "" {
		mode = a.script.Cancel
	}
	if mode == "" {
		mode = CancelRespond
	}
	t := &turnRun{sess: s, id: m.ID, n: a.turns, def: def, mode: mode, cancelled: make(chan struct{}), steers: make(chan string, 64)}
	t.ctx, t.cancelCtx = context.WithCancel(a.ctx)
	s.turn = t
	a.mu.Unlock()

	sc := &stepCtx{session: s.id, turn: t.n, prompt: prompt, arg: arg, meta: metaText(p.Meta), t: t}
	if acc := def.Accept; acc != nil && a.v2.Load() && (acc.Never || acc.Error != nil) {
		a.refuseV2(t, acc)
		return
	}
	if a.v2.Load() {
		a.acceptV2(t, p.Prompt)
	}
	a.wg.Add(1)
	go a.runTurn(t, sc)
}

// metaText is a prompt's _meta as compact JSON; "{}" when it is absent or
// null.
func metaText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return "{}"
	}
	return string(compact(raw))
}

// selectTurn picks the turn for a prompt whose first text block is first.
func (a *agent) selectTurn(first, prompt string) (*Turn, string) {
	if rest, ok := strings.CutPrefix(first, "#"); ok {
		name, arg := rest, ""
		if i := strings.IndexFunc(rest, isSpace); i >= 0 {
			name, arg = rest[:i], strings.TrimSpace(rest[i:])
		}
		if name != "" {
			if t := a.script.Turns[name]; t != nil {
				return t, arg
			}
			fmt.Fprintf(a.stderr, "acpdrive reference agent: no turn named %q; running the default turn\n", name)
		}
	}
	if t := a.script.Turns[a.script.DefaultTurn]; a.script.DefaultTurn != "" && t != nil {
		return t, prompt
	}
	return builtinEcho, prompt
}

// follow returns the turn that replaced t (Turn.Next), and records that
// the one returned has run.
func (a *agent) follow(t *Turn) *Turn {
	a.mu.Lock()
	defer a.mu.Unlock()
	for seen := 0; a.replaced[t] != nil && seen <= len(a.script.Turns); seen++ {
		t = a.replaced[t]
	}
	if t.Next != "" {
		if next := a.script.Turns[t.Next]; next != nil {
			if a.replaced == nil {
				a.replaced = make(map[*Turn]*Turn)
			}
			a.replaced[t] = next
		}
	}
	return t
}

func isSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }

// cancelTurn records a cancel for t; modes respond and error interrupt it.
func (a *agent) cancelTurn(t *turnRun, viaRequest bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if t.responded || t.cancelRequested {
		return
	}
	t.cancelRequested = true
	t.viaRequest = viaRequest
	close(t.cancelled)
	if t.mode != CancelIgnore {
		t.cancelCtx()
	}
}

// respondTurn answers t's prompt once. A cancelled turn (modes respond and
// error) is answered only when force is set.
func (a *agent) respondTurn(t *turnRun, result any, e *RPCError, write, force bool) bool {
	a.mu.Lock()
	if t.responded || (t.cancelRequested && t.mode != CancelIgnore && !force) {
		a.mu.Unlock()
		return false
	}
	t.responded = true
	if t.sess.turn == t {
		t.sess.turn = nil
	}
	a.mu.Unlock()
	t.cancelCtx() // nothing waits on the turn's context once it is answered
	switch {
	case write && a.v2.Load():
		a.idleV2(t, result, e)
	case write:
		a.writeResponse(t.id, result, e)
	}
	return true
}

func (a *agent) isResponded(t *turnRun) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return t.responded
}

func (a *agent) runTurn(t *turnRun, sc *stepCtx) {
	defer a.wg.Done()
	steps := t.def.Steps
	i := 0
	for ; i < len(steps) && !a.isResponded(t); i++ {
		err := a.runStep(t.ctx, sc, &steps[i])
		if err == nil {
			continue
		}
		if errors.Is(err, errCancelled) && a.ctx.Err() == nil {
			a.finishCancelled(t, sc)
		} else {
			a.abandon(t)
		}
		return
	}
	if !a.isResponded(t) {
		if !a.respondTurn(t, promptResult{StopReason: "end_turn"}, nil, true, false) {
			a.finishCancelled(t, sc)
		}
		return
	}
	// Between turns: the prompt is answered, the rest runs on the agent's
	// context and no cancel reaches it.
	_ = a.runSteps(a.ctx, sc, steps[i:])
}

// abandon frees the session of a turn that ends without an answer (exit,
// shutdown).
func (a *agent) abandon(t *turnRun) {
	a.mu.Lock()
	t.responded = true
	if t.sess.turn == t {
		t.sess.turn = nil
	}
	a.mu.Unlock()
	t.cancelCtx()
}

// finishCancelled runs OnCancel and answers a cancelled turn.
func (a *agent) finishCancelled(t *turnRun, sc *stepCtx) {
	sc.forceRespond = true
	if err := a.runSteps(a.ctx, sc, t.def.OnCancel); err != nil {
		a.abandon(t)
		return
	}
	a.mu.Lock()
	via := t.viaRequest
	a.mu.Unlock()
	if t.mode == CancelError || via {
		a.respondTurn(t, nil, &RPCError{Code: codeRequestCanceled, Message: "Request cancelled"}, true, true)
		return
	}
	a.respondTurn(t, promptResult{StopReason: "cancelled"}, nil, true, true)
}

// runSteps runs steps in order on ctx until one fails.
func (a *agent) runSteps(ctx context.Context, sc *stepCtx, steps []Step) error {
	for i := range steps {
		if err := a.runStep(ctx, sc, &steps[i]); err != nil {
			return err
		}
	}
	return nil
}

func (a *agent) runStep(ctx context.Context, sc *stepCtx, st *Step) error {
	if ctx.Err() != nil {
		return a.ctxErr()
	}
	switch st.Step {
	case StepText:
		return a.sendChunks(sc, st, "agent_message_chunk", st.Text, msgID(st, "m", sc.turn), true)
	case StepMCPCall:
		e := *st
		e.Text = a.mcpCall(ctx, st)
		return a.sendChunks(sc, &e, "agent_thought_chunk", e.Text, msgID(st, "t", sc.turn), true)
	case StepThought:
		return a.sendChunks(sc, st, "agent_thought_chunk", st.Text, msgID(st, "t", sc.turn), true)
	case StepUserText:
		return a.sendChunks(sc, st, "user_message_chunk", st.Text, msgID(st, "u", sc.turn), true)
	case StepEcho:
		text := sc.prompt
		switch st.Of {
		case "argument":
			text = sc.arg
		case "meta":
			text = sc.meta
		}
		e := *st
		if e.ChunkSize == 0 && e.Chunks == 0 {
			e.ChunkSize = 16
		}
		return a.sendChunks(sc, &e, "agent_message_chunk", text, msgID(st, "m", sc.turn), false)
	case StepToolCall:
		title := st.Title
		if title == "" {
			title = "Tool call " + st.ToolCallID
		}
		return a.sendUpdate(sc, st, toolUpdate{SessionUpdate: "tool_call", ToolCallID: st.ToolCallID, Title: title,
			Kind: st.Kind, Status: st.Status, Content: st.Content, Locations: st.Locations, RawInput: st.RawInput, RawOutput: st.RawOutput})
	case StepToolCallUpdate:
		return a.sendUpdate(sc, st, toolUpdate{SessionUpdate: "tool_call_update", ToolCallID: st.ToolCallID, Title: st.Title,
			Kind: st.Kind, Status: st.Status, Content: st.Content, Locations: st.Locations, RawInput: st.RawInput, RawOutput: st.RawOutput})
	case StepPlan:
		return a.sendUpdate(sc, st, planUpdate{SessionUpdate: "plan", Entries: rawOr(st.Entries, defaultPlanEntries)})
	case StepAvailableCommands:
		return a.sendUpdate(sc, st, commandsUpdate{SessionUpdate: "available_commands_update", AvailableCommands: rawOr(st.AvailableCommands, defaultCommands)})
	case StepCurrentMode:
		mode := st.ModeID
		if mode == "" {
			mode = "code"
		}
		return a.sendUpdate(sc, st, modeUpdate{SessionUpdate: "current_mode_update", CurrentModeID: mode})
	case StepConfigOptions:
		return a.sendUpdate(sc, st, configUpdate{SessionUpdate: "config_option_update", ConfigOptions: rawOr(st.ConfigOptions, defaultConfigOptions)})
	case StepSessionInfo:
		u := infoUpdate{SessionUpdate: "session_info_update", Title: st.Title, UpdatedAt: st.UpdatedAt}
		if u.Title == "" && u.UpdatedAt == "" {
			u.Title, u.UpdatedAt = "reference agent session", "2026-01-01T00:00:00Z"
		}
		return a.sendUpdate(sc, st, u)
	case StepUsage:
		u := usageUpdate{SessionUpdate: "usage_update", Used: st.Used, Size: st.Size, Cost: st.Cost}
		if u.Used == 0 && u.Size == 0 {
			u.Used, u.Size = 1000, 200000
		}
		return a.sendUpdate(sc, st, u)
	case StepUpdate:
		return a.sendUpdate(sc, st, st.Update)
	case StepPermission:
		return a.permission(ctx, sc, st)
	case StepElicitation:
		return a.elicitation(ctx, sc, st)
	case StepRequest:
		return a.request(ctx, sc, st)
	case StepRaw:
		return a.writeRaw([]byte(st.Line + "\n"))
	case StepHugeLine:
		return a.hugeLine(sc, st)
	case StepSleep:
		ms := numberArg(st, sc, st.Ms)
		if !sleepCtx(ctx, time.Duration(ms)*time.Millisecond) {
			return a.ctxErr()
		}
		return nil
	case StepBurst:
		return a.burst(ctx, sc, st)
	case StepStderr:
		_, _ = a.stderr.Write([]byte(st.Text))
		return nil
	case StepExit:
		a.exit(Exit{Code: st.Code, Stderr: st.Stderr})
		return errExit
	case StepSpawn:
		return a.spawn(st)
	case StepDaemon:
		return a.daemon(sc, st)
	case StepWriteFile:
		return a.writeFile(sc, st)
	case StepWaitSteer:
		var steers chan string
		if sc.t != nil {
			steers = sc.t.steers
		}
		select {
		case text := <-steers:
			return a.sendChunks(sc, st, "agent_message_chunk", "steered: "+text, msgID(st, "m", sc.turn), true)
		case <-ctx.Done():
			return a.ctxErr()
		}
	case StepWaitCancel:
		var cancelled chan struct{}
		if sc.t != nil {
			cancelled = sc.t.cancelled
		}
		select {
		case <-cancelled:
			if sc.t.mode == CancelIgnore {
				return nil
			}
			return errCancelled
		case <-ctx.Done():
			return a.ctxErr()
		}
	case StepStop:
		reason := st.StopReason
		if reason == "" {
			reason = "end_turn"
		}
		res := promptResult{StopReason: reason, Usage: st.Usage, Meta: st.Meta}
		if rep, ok := usageArg(st, sc); ok {
			if rep.Used != 0 || rep.Size != 0 || rep.Cost != nil {
				u := usageUpdate{SessionUpdate: "usage_update", Used: rep.Used, Size: rep.Size, Cost: rep.Cost}
				if err := a.sendUpdate(sc, st, u); err != nil {
					return err
				}
			}
			if rep.Usage != nil {
				res.Usage = rep.Usage
			}
			if rep.Meta != nil {
				res.Meta = rep.Meta
			}
		}
		if a.script.UsageRunningTotal {
			res.Usage = a.runningTotal(sc.session, res.Usage)
		}
		return a.respondStep(sc, res, nil, true)
	case StepError:
		e := st.Error
		if e == nil {
			e = &RPCError{Code: codeInternalError, Message: "Internal error"}
		}
		return a.respondStep(sc, nil, e, true)
	case StepResult:
		res := st.Result
		if res == nil {
			res = json.RawMessage("null")
		}
		return a.respondStep(sc, res, nil, true)
	case StepNoResponse:
		return a.respondStep(sc, nil, nil, false)
	}
	return fmt.Errorf("refagent: unknown step kind %q", st.Step)
}

// respondStep answers the turn's prompt from a response step. Outside a
// turn, or once the turn is answered, it does nothing.
func (a *agent) respondStep(sc *stepCtx, result any, e *RPCError, write bool) error {
	if sc.t == nil || a.isResponded(sc.t) {
		return nil
	}
	if !a.respondTurn(sc.t, result, e, write, sc.forceRespond) {
		return errCancelled
	}
	return nil
}

func msgID(st *Step, prefix string, turn int) string {
	if st.MessageID != nil {
		return *st.MessageID
	}
	return prefix + "-" + strconv.Itoa(turn)
}

func rawOr(raw, def json.RawMessage) json.RawMessage {
	if raw != nil {
		return raw
	}
	return def
}

var (
	defaultPlanEntries = json.RawMessage(`[{"content":"Read the task","priority":"high","status":"completed"},` +
		`{"content":"Write the code","priority":"medium","status":"in_progress"},` +
		`{"content":"Run the tests","priority":"low","status":"pending"}]`)
	defaultCommands      = json.RawMessage(`[{"name":"web","description":"Search the web","input":{"hint":"query"}}]`)
	defaultConfigOptions = json.RawMessage(`[{"id":"model","name":"Model","type":"select","currentValue":"m1","options":[{"value":"m1","name":"M1"}]}]`)
	defaultRequestSchema = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","title":"Name"}},"required":["name"]}`)
)

// DefaultPermissionOptions are the options of a permission step that lists
// none: one of each kind.
func DefaultPermissionOptions() []PermissionOption {
	return []PermissionOption{
		{OptionID: "allow-once", Name: "Allow once", Kind: "allow_once"},
		{OptionID: "allow-always", Name: "Always allow", Kind: "allow_always"},
		{OptionID: "reject-once", Name: "Reject", Kind: "reject_once"},
		{OptionID: "reject-always", Name: "Never allow", Kind: "reject_always"},
	}
}

func (a *agent) updateSession(sc *stepCtx, st *Step) string {
	if st.Session != "" {
		return st.Session
	}
	return sc.session
}

func (a *agent) sendUpdate(sc *stepCtx, st *Step, update any) error {
	if err := a.writeMsg(outMsg{Method: "session/update", Params: updateParams{SessionID: a.updateSession(sc, st), Update: update}}); err != nil {
		return errShutdown
	}
	return nil
}

// sendChunks sends text as one or more chunks of kind. atLeastOne sends an
// empty chunk for empty text.
func (a *agent) sendChunks(sc *stepCtx, st *Step, kind, text, id string, atLeastOne bool) error {
	var parts []string
	switch {
	case st.Chunks > 0:
		parts = splitN(text, st.Chunks)
	case st.ChunkSize > 0:
		parts = splitBySize(text, st.ChunkSize)
	case text != "":
		parts = []string{text}
	}
	if len(parts) == 0 && atLeastOne {
		parts = []string{""}
	}
	for _, p := range parts {
		if err := a.sendUpdate(sc, st, chunkUpdate{SessionUpdate: kind, MessageID: id, Content: textBlock{Type: "text", Text: p}}); err != nil {
			return err
		}
	}
	return nil
}

// splitBySize cuts s into pieces of at most n bytes, never inside a UTF-8
// sequence (a piece holds at least one rune).
func splitBySize(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		if len(s) <= n {
			out = append(out, s)
			break
		}
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		if cut == 0 {
			_, cut = utf8.DecodeRuneInString(s)
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return out
}

// splitN cuts s into n pieces of about equal rune count (fewer when s has
// fewer than n runes).
func splitN(s string, n int) []string {
	runes := []rune(s)
	if n <= 1 || len(runes) <= 1 {
		if s == "" {
			return nil
		}
		return []string{s}
	}
	if n > len(runes) {
		n = len(runes)
	}
	out := make([]string, 0, n)
	for i := range n {
		out = append(out, string(runes[i*len(runes)/n:(i+1)*len(runes)/n]))
	}
	return out
}

// usageArg reads a stop step's argument as a UsageReport.
func usageArg(st *Step, sc *stepCtx) (UsageReport, bool) {
	var rep UsageReport
	if !st.FromArgument || json.Unmarshal([]byte(strings.TrimSpace(sc.arg)), &rep) != nil {
		return rep, false
	}
	return rep, true
}

func numberArg(st *Step, sc *stepCtx, def int) int {
	if st.FromArgument {
		if n, err := strconv.Atoi(strings.TrimSpace(sc.arg)); err == nil && n >= 0 {
			return n
		}
	}
	return def
}

func (a *agent) writeRaw(b []byte) error {
	if err := a.out.write(b); err != nil {
		return errShutdown
	}
	return nil
}

// call wrapper for steps: carries the turn's cancelRequests option.
func (a *agent) stepCall(ctx context.Context, sc *stepCtx, method string, params any, wait bool) (*inMsg, error) {
	cancelRequests := sc.t != nil && sc.t.def.CancelRequests
	return a.call(ctx, method, params, wait, cancelRequests)
}

func (a *agent) permission(ctx context.Context, sc *stepCtx, st *Step) error {
	toolCall := st.ToolCall
	if toolCall == nil {
		tc := permissionToolCall{ToolCallID: st.ToolCallID, Title: st.Title, Kind: st.Kind}
		if tc.ToolCallID == "" {
			tc.ToolCallID = "perm-" + strconv.Itoa(sc.turn)
		}
		if tc.Title == "" {
			tc.Title = "Edit a file"
		}
		if tc.Kind == "" {
			tc.Kind = "edit"
		}
		toolCall, _ = json.Marshal(tc)
	}
	opts := st.Options
	if opts == nil {
		opts = DefaultPermissionOptions()
	}
	params := permissionParams{SessionID: a.updateSession(sc, st), ToolCall: toolCall, Options: opts}
	resp, err := a.stepCall(ctx, sc, "session/request_permission", params, !st.NoWait)
	if err != nil || resp == nil || !st.Report {
		return err
	}
	return a.report(sc, reportText("permission outcome", resp, func(res json.RawMessage) string {
		var r struct {
			Outcome struct {
				Outcome  string `json:"outcome"`
				OptionID string `json:"optionId"`
			} `json:"outcome"`
		}
		if json.Unmarshal(res, &r) != nil || r.Outcome.Outcome == "" {
			return "unrecognized " + string(compact(res))
		}
		if r.Outcome.Outcome == "selected" {
			return "selected " + r.Outcome.OptionID
		}
		return r.Outcome.Outcome
	}))
}

func (a *agent) elicitation(ctx context.Context, sc *stepCtx, st *Step) error {
	var params any = st.Params
	if st.Params == nil {
		p := elicitationParams{SessionID: a.updateSession(sc, st), Mode: st.Mode, Message: st.Message, RequestedSchema: st.RequestedSchema}
		if p.Mode == "" {
			p.Mode = "form"
		}
		if p.Message == "" {
			p.Message = "What is your name?"
		}
		if p.RequestedSchema == nil && p.Mode == "form" {
			p.RequestedSchema = defaultRequestSchema
		}
		params = p
	}
	resp, err := a.stepCall(ctx, sc, "elicitation/create", params, !st.NoWait)
	if err != nil || resp == nil || !st.Report {
		return err
	}
	return a.report(sc, reportText("elicitation outcome", resp, func(res json.RawMessage) string {
		var r struct {
			Action string `json:"action"`
		}
		if json.Unmarshal(res, &r) != nil || r.Action == "" {
			return "unrecognized " + string(compact(res))
		}
		return r.Action
	}))
}

func (a *agent) request(ctx context.Context, sc *stepCtx, st *Step) error {
	params := st.Params
	sid := a.updateSession(sc, st)
	if params == nil {
		params, _ = json.Marshal(map[string]string{"sessionId": sid})
	} else if bytes.HasPrefix(bytes.TrimSpace(params), []byte("{")) {
		var obj map[string]json.RawMessage
		if json.Unmarshal(params, &obj) == nil {
			if _, has := obj["sessionId"]; !has {
				obj["sessionId"], _ = json.Marshal(sid)
				params, _ = json.Marshal(obj)
			}
		}
	}
	resp, err := a.stepCall(ctx, sc, st.Method, params, !st.NoWait)
	if err != nil || resp == nil || !st.Report {
		return err
	}
	return a.report(sc, reportText(st.Method+" answer", resp, func(res json.RawMessage) string {
		return "result " + string(compact(res))
	}))
}

func reportText(label string, resp *inMsg, describe func(json.RawMessage) string) string {
	if resp.Error != nil {
		return fmt.Sprintf("%s: error %d %s", label, resp.Error.Code, resp.Error.Message)
	}
	return label + ": " + describe(orEmpty(resp.Result))
}

// report emits an agent_message_chunk of its own message saying what an
// answer was.
func (a *agent) report(sc *stepCtx, text string) error {
	sc.reports++
	id := "report-" + strconv.Itoa(sc.turn) + "-" + strconv.Itoa(sc.reports)
	return a.sendChunks(sc, &Step{}, "agent_message_chunk", text, id, true)
}

// HugeLineDefault is the default length of a hugeLine step: 10 MiB + 1 KiB,
// just over the 10 MiB line bound common ACP clients apply.
const HugeLineDefault = 10<<20 + 1<<10

func (a *agent) hugeLine(sc *stepCtx, st *Step) error {
	n := numberArg(st, sc, st.Bytes)
	if n == 0 {
		n = HugeLineDefault
	}
	return a.writeRaw(renderHugeLine(a.updateSession(sc, st), msgID(st, "m", sc.turn), n))
}

// renderHugeLine renders a session/update agent_message_chunk line of exactly
// n bytes before its newline (longer when n is below the envelope's size).
func renderHugeLine(sessionID, messageID string, n int) []byte {
	line, _ := encodeLine(outMsg{JSONRPC: "2.0", Method: "session/update", Params: updateParams{SessionID: sessionID,
		Update: chunkUpdate{SessionUpdate: "agent_message_chunk", MessageID: messageID, Content: textBlock{Type: "text", Text: ""}}}})
	marker := []byte(`"text":""`)
	at := bytes.LastIndex(line, marker) + len(marker) - 1
	pad := n - (len(line) - 1)
	if pad < 0 {
		pad = 0
	}
	out := make([]byte, 0, len(line)+pad)
	out = append(out, line[:at]...)
	out = append(out, bytes.Repeat([]byte("x"), pad)...)
	out = append(out, line[at:]...)
	return out
}

// burstBatchBytes is about how many bytes a burst hands to one write.
const burstBatchBytes = 64 << 10

// burst writes count identical agent_message_chunk lines, rendered once and
// written in batches of about 64 KiB.
func (a *agent) burst(ctx context.Context, sc *stepCtx, st *Step) error {
	count := numberArg(st, sc, st.Count)
	if count == 0 && !(st.FromArgument && strings.TrimSpace(sc.arg) == "0") {
		count = 1000
	}
	text := st.Text
	if text == "" {
		text = "x"
	}
	line, err := encodeLine(outMsg{JSONRPC: "2.0", Method: "session/update", Params: updateParams{SessionID: a.updateSession(sc, st),
		Update: chunkUpdate{SessionUpdate: "agent_message_chunk", MessageID: msgID(st, "m", sc.turn), Content: textBlock{Type: "text", Text: text}}}})
	if err != nil {
		return err
	}
	per := max(1, burstBatchBytes/len(line))
	batch := bytes.Repeat(line, min(per, max(count, 1)))
	for left := count; left > 0; {
		if ctx.Err() != nil {
			return a.ctxErr()
		}
		k := min(per, left)
		if err := a.out.write(batch[:k*len(line)]); err != nil {
			return errShutdown
		}
		left -= k
	}
	return nil
}

// spawn starts a descendant that inherits the agent's stdout and stderr and
// is not waited for, so it holds them open after the agent exits.
func (a *agent) spawn(st *Step) error {
	argv := st.Command
	if len(argv) == 0 {
		argv = []string{"sleep", "60"}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout = a.stdoutFile
	cmd.Stderr = a.stderrFile
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(a.stderr, "acpdrive reference agent: spawn %q: %v\n", argv, err)
		return nil
	}
	fmt.Fprintf(a.stderr, "acpdrive reference agent: spawned descendant pid %d holding stdout\n", cmd.Process.Pid)
	_ = cmd.Process.Release()
	return nil
}
