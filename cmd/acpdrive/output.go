package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
)

// turnResultLine is the JSON line printed after each turn.
type turnResultLine struct {
	Type       string `json:"type"`
	Turn       int    `json:"turn"`
	Outcome    string `json:"outcome"`
	ErrorKind  string `json:"error_kind,omitempty"`
	Retryable  *bool  `json:"retryable,omitempty"`
	StopReason string `json:"stop_reason,omitempty"`
	Message    string `json:"message,omitempty"`
	// Usage is the turn's measured figures; absent when not measured.
	Usage *domain.Usage `json:"usage,omitempty"`
	Model string        `json:"model,omitempty"`
	// Source names what measured Usage (docs/behaviour.md#token-accounting).
	Source string `json:"source,omitempty"`
	// Breakdown is the runtime's per-model figures, side calls included.
	Breakdown []domain.ModelUsage `json:"breakdown,omitempty"`
	// Cost is the turn's share of the session's cumulative cost.
	Cost *domain.Cost `json:"cost,omitempty"`
	// Context is the context window's use at the turn's end.
	Context *domain.ContextUsage `json:"context,omitempty"`
	// Reply is the turn's reply, whole up to domain.ReplyCap
	// (docs/behaviour.md#turn-result); ReplyCut marks one cut there.
	Reply    string `json:"reply,omitempty"`
	ReplyCut bool   `json:"reply_cut,omitempty"`
	// CancelUnanswered reports that the runtime never answered the prompt
	// after the cancel within read_timeout.
	CancelUnanswered bool `json:"cancel_unanswered,omitempty"`
	// RuntimeExit is how the runtime's process ended and the tail of its
	// standard error, when its exit ended the turn (port_exit).
	RuntimeExit string `json:"runtime_exit,omitempty"`
	// Failure is the class of a turn that did not complete
	// (docs/behaviour.md#failures).
	Failure *domain.Failure `json:"failure,omitempty"`
	// Result is the turn's structured result, ResultSource where it came
	// from, ResultMissing why a turn under an output schema has none
	// (docs/behaviour.md#structured-results).
	Result        json.RawMessage `json:"result,omitempty"`
	ResultSource  string          `json:"result_source,omitempty"`
	ResultMissing string          `json:"result_missing,omitempty"`
	// Question is the unanswered question a turn_input_required turn
	// ended on (docs/behaviour.md#elicitation).
	Question *domain.ElicitationInfo `json:"question,omitempty"`
}

// newTurnResultLine is turn n's result as its JSON line shows it; exit is
// how the runtime ended when its exit ended the turn, unanswered that the
// runtime never answered after a cancel.
func newTurnResultLine(n int, res domain.TurnResult, exit string, unanswered bool) turnResultLine {
	line := turnResultLine{Type: "turn_result", Turn: n, Outcome: string(res.Outcome),
		StopReason: res.StopReason, Message: res.Message(), Usage: res.Usage, Model: res.Model,
		Source: res.Source, Breakdown: res.Breakdown, Cost: res.Cost, Context: res.Context, RuntimeExit: exit,
		CancelUnanswered: unanswered, Reply: res.Reply, ReplyCut: res.ReplyCut, Failure: res.Failure,
		Result: res.Result, ResultSource: res.ResultSource, ResultMissing: res.ResultMissing,
		Question: res.Question}
	if res.Err != nil {
		retry := res.Retryable()
		line.ErrorKind, line.Retryable = string(res.Err.Kind), &retry
	}
	return line
}

// startupFailedLine is the JSON line printed when the session cannot start.
type startupFailedLine struct {
	Type      string    `json:"type"`
	Time      time.Time `json:"time"`
	ErrorKind string    `json:"error_kind"`
	Message   string    `json:"message"`
	// Reason tells an agent_not_found's "the program is not there"
	// (program_missing) from "the runtime does not offer this"
	// (not_offered, protocol_unsupported) and configuration_invalid.
	Reason string `json:"reason,omitempty"`
}

// runResultLine is the last JSON line of a run.
type runResultLine struct {
	Type           string   `json:"type"`
	SessionID      string   `json:"session_id,omitempty"`
	AgentPID       int      `json:"agent_pid,omitempty"`
	CapabilityGaps []string `json:"capability_gaps"`
	Turns          int      `json:"turns"`
	// Host is the SSH host the session ran on; absent for a local run.
	Host string `json:"host,omitempty"`
	// Survivors lists what of the runtime's process tree outlived the
	// teardown (docs/behaviour.md#containment); absent when nothing did.
	Survivors []domain.Survivor `json:"survivors,omitempty"`
	// Usage is the run's measured total, absent when no turn was
	// measured; MeasuredTurns counts the turns it sums.
	Usage         *domain.Usage `json:"usage,omitempty"`
	MeasuredTurns int           `json:"measured_turns"`
	// Cost is the run's cost per currency (never summed across
	// currencies), absent when no turn had one.
	Cost []domain.Cost `json:"cost,omitempty"`
	// Stopped says why the run sent no further prompt, when it was not a
	// turn's own outcome (the token ceiling).
	Stopped string `json:"stopped,omitempty"`
	// Notice is a closing remark (the ceiling could not bound the run).
	Notice string `json:"notice,omitempty"`
	// ToolServers is the tool-server confirmation's verdict, present
	// when --confirm-tool-servers asked for it on a local launch
	// (docs/behaviour.md#tool-server-confirmation).
	ToolServers *domain.ToolServerCheck `json:"tool_servers,omitempty"`
	// Mode and Config are the session's mode and every configuration
	// option's value once its configuration was applied; absent when the
	// runtime reports none (docs/behaviour.md#session-configuration).
	Mode   string            `json:"mode,omitempty"`
	Model  string            `json:"model,omitempty"`
	Config map[string]string `json:"config,omitempty"`
	// ForkedFrom is the session --fork started this one from
	// (docs/behaviour.md#sessions-as-resources-and-child-sessions); absent
	// otherwise.
	ForkedFrom string `json:"forked_from,omitempty"`
	// ProtocolVersion is the ACP version the session spoke
	// (docs/behaviour.md#protocol-v2); absent when no handshake completed.
	ProtocolVersion int `json:"protocol_version,omitempty"`
	// Resume is what became of --resume: continued, or why not
	// (docs/behaviour.md#session-continuation); absent without --resume.
	Resume *resumeLine `json:"resume,omitempty"`
	// Permissions counts the permission requests per decision (allow,
	// refuse, person, cancelled), the children's included; absent when
	// none was asked (docs/behaviour.md#permission-posture).
	Permissions map[string]int `json:"permissions,omitempty"`
	// Result is the last turn's structured result, absent when it has
	// none (docs/behaviour.md#structured-results).
	Result json.RawMessage `json:"result,omitempty"`
}

// printer renders a run either as JSON lines or for a person.
type printer struct {
	host   string // the SSH host that ran the session, "" locally
	json   bool
	out    io.Writer // buf, written with mu held
	errw   io.Writer // standard error: a person's error lines
	buf    *flushWriter
	status *statusLine // nil unless human output goes to a terminal
	// eager: flush after every call (stdout is a terminal: the output is
	// interleaved with the status line on stderr).
	eager bool
	line  []byte // the hand-encoded JSON line being built

	mu        sync.Mutex
	enc       *json.Encoder
	midLine   bool // human output: the streamed reply left a line open
	lastMsgID string
	streamed  bool // a reply was streamed and its report has not arrived
	tools     int
	title     string      // the session title last shown
	resume    *resumeLine // what became of --resume; nil without it
	// unanswered is the bound waited for the runtime's answer after a
	// cancel it never gave, for the next turn result; "" when it answered.
	unanswered string
	// bounds names the turn's bounds the way the person set them.
	bounds boundNames
	// quiet: only the reply on stdout; what went wrong on stderr
	// (--quiet).
	quiet bool
	// schema: the run has an output schema; --quiet then prints the
	// result alone (docs/behaviour.md#structured-results).
	schema bool
	// result is the last turn's structured result, for run_result.
	result json.RawMessage
	// verbose: also what the summary says anyway (--verbose): the
	// declared capability gaps' notice, a thought whole.
	verbose bool
	// colour paints a person's output on a terminal.
	colour palette
	// The live view's state (liveview.go).
	running    map[string]runningTool
	latestTool string
	thinking   bool
	thought    strings.Builder
	mode       string // the mode last shown
	// permissions counts permission_decision events per decision.
	permissions map[string]int
}

// newPrinter prints to stdout through a buffer (flushWriter) that is
// written out when the session waits for the runtime (idle), within
// maxOutputLatency otherwise, and when the run ends (close).
func newPrinter(jsonOut bool, stdout, stderr io.Writer) *printer {
	p := &printer{json: jsonOut, errw: stderr}
	p.buf = newFlushWriter(stdout, &p.mu)
	p.out = p.buf
	p.enc = json.NewEncoder(p.buf)
	p.enc.SetEscapeHTML(false)
	p.eager = isTerminal(stdout)
	if !jsonOut && p.eager {
		p.status = newStatusLine(stderr)
		p.colour.on = colourWanted()
	}
	return p
}

// beQuiet makes the printer print only the reply (--quiet): no notices,
// tools, summaries or status line; a turn that does not complete and the
// run's own remarks are one line each on stderr.
func (p *printer) beQuiet() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.quiet = true
	if p.status != nil {
		p.status.stop()
		p.status = nil
	}
}

// idle writes out the buffered output: the session has handled all the
// runtime sent so far (app.Options.OnReadIdle).
func (p *printer) idle() { p.buf.idle() }

// close writes out what is buffered and stops the status line; nothing
// may be printed afterwards.
func (p *printer) close() {
	p.buf.close()
	if p.status != nil {
		p.status.stop()
	}
}

// done ends one printer call, with p.mu held: on a terminal the output is
// written at once.
func (p *printer) done() {
	if p.eager {
		p.buf.flush()
	}
}

// text streams a reply chunk (human output only).
func (p *printer) text(messageID, text string) {
	if p.json {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.done()
	if p.quiet && p.schema {
		return // the result alone (docs/behaviour.md#structured-results)
	}
	p.clearStatus()
	p.flushThought()
	if p.midLine && messageID != p.lastMsgID {
		_, _ = io.WriteString(p.out, "\n")
	}
	p.lastMsgID = messageID
	p.streamed = true
	_, _ = io.WriteString(p.out, text)
	p.midLine = !strings.HasSuffix(text, "\n")
	if p.status != nil {
		p.status.hold(p.midLine)
	}
	p.updateStatus("")
}

// event prints one normalized event.
func (p *printer) event(ev domain.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.done()
	p.countPermission(ev)
	if p.json {
		if ev.Type == domain.EventStartupFailed {
			return // printed as startup_failed with its error kind
		}
		if line, ok := appendBareEvent(p.line[:0], ev); ok {
			p.line = line
			_, _ = p.out.Write(line)
			return
		}
		_ = p.enc.Encode(ev)
		return
	}
	if p.quiet {
		if ev.Type == domain.EventNotification && p.streamed {
			p.streamed = false
		}
		return
	}
	p.clearStatus()
	if ev.ParentSessionID != "" {
		p.childEvent(ev)
		return
	}
	if ev.Type == domain.EventOtherMessage && ev.Message == domain.MsgReasoningBlock {
		p.thoughtChunk(ev.Thought)
		return
	}
	switch ev.Type {
	case domain.EventMessageChunk, domain.EventContextUsage, domain.EventCommandsAvailable, domain.EventConfigOptions:
		// Not shown, and no end of a thought.
	default:
		p.flushThought()
	}
	switch ev.Type {
	case domain.EventNotification:
		if ev.Message != "" {
			p.endLine()
			if !p.streamed && (p.verbose || !strings.HasPrefix(ev.Message, domain.MsgCapabilityGapNotice)) {
				// Not the report of a streamed reply: a notice. The
				// declared gaps are said once, in the summary, unless
				// --verbose (docs/behaviour.md#cli).
				fmt.Fprintln(p.out, p.colour.paint(sgrYellow, "· "+ev.Message))
			}
			p.streamed = false
			p.updateStatus(ev.Message)
			return
		}
	case domain.EventToolResult:
		p.endLine()
		p.tools++
		p.toolEnded(ev.ToolCallID)
		mark := p.colour.paint(sgrGreen, "ok")
		if ev.ToolError {
			mark = p.colour.paint(sgrRed, "failed")
		}
		fmt.Fprintf(p.out, "⚙ %s %s (%d ms) %s\n", ev.ToolName, mark, ev.ToolDurationMS, ev.Message)
	case domain.EventOtherMessage, domain.EventMalformed:
		if ev.Message == domain.MsgPlanUpdate && ev.Type == domain.EventOtherMessage {
			p.printPlan(ev.Plan)
			break
		}
		p.endLine()
		fmt.Fprintf(p.out, "· [%s] %s\n", ev.Type, ev.Message)
	case domain.EventSteered:
		p.endLine()
		fmt.Fprintln(p.out, "· steered: "+ev.Message)
	case domain.EventRuntimeNotice:
		p.endLine()
		fmt.Fprintln(p.out, p.colour.paint(sgrYellow, "· notice: "+ev.Message))
	case domain.EventPermissionDecision:
		p.endLine()
		fmt.Fprintln(p.out, "· permission: "+ev.Message)
	case domain.EventElicitation:
		p.endLine()
		fmt.Fprintln(p.out, "· question: "+ev.Message)
	case domain.EventRuntimeRetrying:
		p.endLine()
		fmt.Fprintln(p.out, p.colour.paint(sgrYellow, "· "+ev.Message))
	case domain.EventSessionInfo:
		if ev.Title != "" && ev.Title != p.title {
			p.title = ev.Title
			p.endLine()
			fmt.Fprintf(p.out, "· title: %s\n", ev.Title)
		}
	case domain.EventModeChanged:
		if ev.ModeID != p.mode {
			p.mode = ev.ModeID
			p.endLine()
			fmt.Fprintf(p.out, "· mode: %s\n", ev.ModeID)
		}
	case domain.EventSessionStarted, domain.EventResultFollowUp:
		if ev.Type == domain.EventResultFollowUp {
			p.endLine()
			fmt.Fprintln(p.out, p.colour.paint(sgrYellow, "· "+ev.Message))
		}
		p.tools = 0
		p.running, p.latestTool = nil, ""
		p.showRunning()
		if p.status != nil {
			p.status.begin()
		}
	}
	p.updateStatus("")
}

func (p *printer) endLine() {
	if p.midLine {
		fmt.Fprintln(p.out)
		p.midLine = false
		if p.status != nil {
			p.status.hold(false)
		}
	}
}

func (p *printer) clearStatus() {
	if p.status != nil {
		p.status.clear()
	}
}

func (p *printer) updateStatus(last string) {
	if p.status != nil {
		p.status.update(last, p.tools)
	}
}

// turnResult prints a turn's result; exit is how the runtime ended when
// its exit ended the turn ("" otherwise).
func (p *printer) turnResult(n int, res domain.TurnResult, exit string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.result = res.Result
	defer p.buf.flush() // a result is a boundary the reader waits for
	if p.json {
		_ = p.enc.Encode(newTurnResultLine(n, res, exit, p.unanswered != ""))
		p.unanswered = ""
		return
	}
	p.clearStatus()
	p.flushThought()
	p.endLine()
	// A call still open when the turn ended never reports its end.
	p.running, p.latestTool = nil, ""
	p.showRunning()
	if p.quiet {
		if p.schema && res.Result != nil {
			fmt.Fprintf(p.out, "%s\n", res.Result)
		}
		if res.ResultMissing != "" {
			fmt.Fprintf(p.errw, "acpdrive: turn %d: result_missing: %s\n", n, res.ResultMissing)
		}
		if res.Outcome != domain.OutcomeCompleted {
			p.buf.flush()
			fmt.Fprintf(p.errw, "acpdrive: turn %d: %s\n", n, p.turnText(res, exit))
			if res.Failure != nil && res.Failure.Class != domain.FailureUnknown {
				fmt.Fprintf(p.errw, "acpdrive: failure: %s\n", res.Failure.Text())
			}
		}
		p.unanswered = ""
		return
	}
	text := p.turnText(res, exit)
	summary := fmt.Sprintf("turn %d: ", n) + text
	p.unanswered = ""
	if p.status != nil {
		summary += fmt.Sprintf(" in %s, %s", p.status.elapsed().Round(time.Millisecond), plural(p.tools, "tool call", "tool calls"))
	}
	summary += "; tokens: " + usageText(res.Usage, res.Model)
	if res.Cost != nil {
		summary += "; cost " + domain.CostText(*res.Cost)
	}
	if res.Context != nil {
		summary += "; context " + domain.ContextText(*res.Context)
	}
	colour := sgrGreen
	if res.Outcome != domain.OutcomeCompleted {
		colour = sgrRed
	}
	fmt.Fprintln(p.out, p.colour.paint(colour, "── "+summary))
	switch {
	case res.Result != nil:
		fmt.Fprintln(p.out, p.colour.paint(colour, "── result ("+res.ResultSource+"): "+string(res.Result)))
	case res.ResultMissing != "":
		fmt.Fprintln(p.out, p.colour.paint(sgrRed, "── result_missing: "+res.ResultMissing))
	}
	if res.Failure != nil && res.Failure.Class != domain.FailureUnknown {
		fmt.Fprintln(p.out, p.colour.paint(colour, "── failure: "+res.Failure.Text()))
	}
	if q := res.Question; q != nil {
		fmt.Fprintln(p.out, p.colour.paint(colour, fmt.Sprintf("── question: %q", q.Message)))
	}
	if res.Outcome != domain.OutcomeCompleted && res.Outcome != domain.OutcomeCancelled {
		// Errors go to standard error (docs/behaviour.md#cli): the turn
		// that did not complete is one line there too, as under --quiet;
		// a cancelled one was asked for, and its answer is already there.
		p.buf.flush()
		fmt.Fprintf(p.errw, "acpdrive: turn %d: %s\n", n, text)
	}
}

// interrupted tells a person at once what a SIGINT or SIGTERM does
// (docs/behaviour.md#cli): the first cancels the turn, the second stops
// the session. Human output only, on standard error.
func (p *printer) interrupted(count int) {
	if p.json {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clearStatus()
	p.endLine()
	p.buf.flush() // what came before the signal, before the line about it
	if count == 1 {
		fmt.Fprintln(p.errw, "acpdrive: cancelling the turn (session/cancel sent, waiting for the runtime's answer); interrupt again to stop the session")
		return
	}
	fmt.Fprintln(p.errw, "acpdrive: stopping the session")
}

// cancelUnanswered records, for the next turn result, that the runtime did
// not answer after the cancel within bound.
func (p *printer) cancelUnanswered(bound string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.unanswered = bound
}

// resumed records what became of --resume and, when the session was not
// continued, tells a person at once (docs/behaviour.md#session-continuation).
func (p *printer) resumed(r *resumeLine, newID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.done()
	p.resume = r
	if r == nil || r.Continued || p.json {
		return
	}
	p.clearStatus()
	if p.quiet {
		fmt.Fprintf(p.errw, "acpdrive: %s\n", r.text(newID))
		return
	}
	fmt.Fprintf(p.out, "· %s\n", r.text(newID))
}

// turnText is a turn's outcome for a person: the outcome, the stop
// reason, the error, how the runtime ended, an unacknowledged cancel.
func (p *printer) turnText(res domain.TurnResult, exit string) string {
	text := string(res.Outcome)
	if res.StopReason != "" {
		text += " (stop reason " + res.StopReason + ")"
	}
	if res.Err != nil {
		text += fmt.Sprintf(": %s [%s, retryable=%t]", p.bounds.rename(res.Err.Message), res.Err.Kind, res.Retryable())
	}
	if exit != "" {
		text += "; the runtime exited: " + exit
	}
	if p.unanswered != "" {
		text += "; the runtime never acknowledged the cancel (no answer within " + p.unanswered + ")"
	}
	return text
}

// startupFailed prints why the session could not start; settings name
// the bounds a timeout message quotes.
func (p *printer) startupFailed(err error, settings domain.SessionSettings) {
	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.buf.flush() // a result is a boundary the reader waits for
	kind, msg := "", err.Error()
	var ae *domain.AgentError
	if errors.As(err, &ae) {
		kind, msg = string(ae.Kind), ae.Message
	}
	if p.json {
		_ = p.enc.Encode(startupFailedLine{Type: "startup_failed", Time: time.Now().UTC(), ErrorKind: kind, Message: msg, Reason: string(startReason(err))})
		return
	}
	p.clearStatus()
	// A person's errors go to standard error; --json's startup_failed
	// stays on stdout (docs/behaviour.md#cli).
	fmt.Fprintf(p.errw, "session could not start: %s\n", withReason(err, startupText(err, settings)))
}

// usageText renders figures for a person; "not measured" when there are
// none (never zero in their place).
func usageText(u *domain.Usage, model string) string {
	if u == nil {
		return "not measured"
	}
	t := fmt.Sprintf("%d in, %d out", u.InputTokens, u.OutputTokens)
	if u.CacheReadTokens > 0 || u.CacheWriteTokens > 0 {
		t += fmt.Sprintf(", cache %d read / %d written", u.CacheReadTokens, u.CacheWriteTokens)
	}
	if u.ReasoningTokens > 0 {
		t += fmt.Sprintf(", %d reasoning", u.ReasoningTokens)
	}
	if u.ToolUseTokens > 0 {
		t += fmt.Sprintf(", %d tool use", u.ToolUseTokens)
	}
	t += fmt.Sprintf(", %d total", u.TotalTokens)
	if model != "" {
		t += " (" + model + ")"
	}
	return t
}

// runEnd is how a run ended beyond its turns.
type runEnd struct {
	budget  runBudgets
	stopped string
	notice  string
}

func (p *printer) runResult(sess *app.Session, turns int, stopErr error, end runEnd) {
	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.buf.flush() // a result is a boundary the reader waits for
	var survivors []domain.Survivor
	var surv *domain.SurvivorsError
	if errors.As(stopErr, &surv) {
		survivors = surv.Survivors
	}
	caps := sess.Capabilities()
	gaps := []string{}
	for _, label := range caps.Gaps() {
		gaps = append(gaps, string(label))
	}
	if p.json {
		line := runResultLine{Type: "run_result", SessionID: sess.ID(), AgentPID: sess.PID(), CapabilityGaps: gaps, Turns: turns,
			Host: p.host, Survivors: survivors, MeasuredTurns: end.budget.tokens.Measured, Stopped: end.stopped, Notice: end.notice,
			ToolServers: sess.AgentInfo().ToolServers, ForkedFrom: sess.ForkedFrom(), ProtocolVersion: sess.AgentInfo().ProtocolVersion, Resume: p.resume}
		line.Mode, line.Config = postureFields(sess.Posture())
		line.Model = sess.Posture().Model
		if end.budget.tokens.Measured > 0 {
			used := end.budget.tokens.Used
			line.Usage = &used
		}
		line.Cost = end.budget.cost.Spent
		line.Permissions = p.permissions
		line.Result = p.result
		_ = p.enc.Encode(line)
		return
	}
	p.clearStatus()
	if p.quiet {
		p.buf.flush()
		for _, remark := range []string{end.stopped, end.notice} {
			if remark != "" {
				fmt.Fprintf(p.errw, "acpdrive: %s\n", remark)
			}
		}
		if surv != nil {
			fmt.Fprintf(p.errw, "acpdrive: %s\n", surv.Error())
		}
		return
	}
	fmt.Fprintf(p.out, "session %s (pid %d): %d turn(s)", sess.ID(), sess.PID(), turns)
	if from := sess.ForkedFrom(); from != "" {
		fmt.Fprintf(p.out, "; forked from %s", from)
	}
	if r := p.resume; r != nil && r.Continued {
		fmt.Fprintf(p.out, "; continued through %s", r.Route)
	} else if r != nil {
		fmt.Fprintf(p.out, "; %s not continued, started afresh", r.Requested)
	}
	if p.host != "" {
		fmt.Fprintf(p.out, " on %s", p.host)
	}
	if len(gaps) > 0 {
		fmt.Fprintf(p.out, "; capability gaps: %s", strings.Join(gaps, ", "))
	}
	if c := sess.AgentInfo().ToolServers; c != nil {
		fmt.Fprintf(p.out, "; tool servers: %s", toolServersText(c))
	}
	if pt := sess.Posture(); !pt.IsZero() {
		fmt.Fprintf(p.out, "; %s", pt.Text())
	}
	if text := permissionCounts(p.permissions); text != "" {
		fmt.Fprintf(p.out, "; permissions: %s", text)
	}
	if end.budget.tokens.Measured > 0 {
		used := end.budget.tokens.Used
		fmt.Fprintf(p.out, "; tokens: %s over %d measured turn(s)", usageText(&used, ""), end.budget.tokens.Measured)
	} else {
		fmt.Fprint(p.out, "; tokens: not measured")
	}
	for _, c := range end.budget.cost.Spent {
		fmt.Fprintf(p.out, "; cost %s", domain.CostText(c))
	}
	if surv != nil {
		fmt.Fprintf(p.out, "; %s", surv.Error())
	}
	fmt.Fprintln(p.out)
	if end.stopped != "" {
		fmt.Fprintln(p.out, end.stopped)
	}
	if end.notice != "" {
		fmt.Fprintln(p.out, end.notice)
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// toolServersText is the tool-server confirmation's verdict for a person.
func toolServersText(c *domain.ToolServerCheck) string {
	bound := time.Duration(c.BoundMS) * time.Millisecond
	switch {
	case c.Confirmed && c.MCPClient != "":
		return "confirmed (the runtime's MCP client " + c.MCPClient + " initialized the beacon)"
	case c.Confirmed:
		return "confirmed"
	}
	return "not confirmed within " + bound.String()
}

// startupText is a start-up error on one line for a person: a call that
// timed out names the call, its bound and the flag that sets it
// (docs/behaviour.md#cli); any other error is its text with line breaks
// joined.
func startupText(err error, s domain.SessionSettings) string {
	var ae *domain.AgentError
	if errors.As(err, &ae) && ae.Kind == domain.KindResponseTimeout && ae.Cause != nil {
		method, rest, found := strings.Cut(ae.Cause.Error(), "\n")
		if found && rest == context.DeadlineExceeded.Error() {
			bound, flag := s.EffectiveReadTimeout(), "--read-timeout"
			if method == "initialize" {
				bound, flag = s.InitializeTimeout(), "--init-timeout"
			}
			return fmt.Sprintf("agent: %s: the runtime did not answer %s within %s (%s sets this bound)", ae.Kind, method, bound, flag)
		}
	}
	return strings.ReplaceAll(err.Error(), "\n", ": ")
}

// App's messages for a turn that ran past a bound; they name the
// WORKFLOW.md key (docs/behaviour.md#turns-and-their-disposition).
const (
	msgTurnTimeout = "the turn exceeded turn_timeout_ms"
	msgTurnStalled = "the agent produced no event within stall_timeout_ms"
)

// boundNames says, for a person, each turn bound as it was set: the flag
// typed, the WORKFLOW.md key, or the default, with its value.
type boundNames struct {
	turn, stall string
}

// newBoundNames names the bounds of cfg as f set them.
func newBoundNames(f runFlags, cfg domain.Config) boundNames {
	name := func(flag, key string, v time.Duration) string {
		switch {
		case f.set[flag]:
			return "--" + flag + " " + v.String()
		case f.workflow != "":
			return key + " (" + v.String() + ")"
		}
		return v.String() + " (the default; --" + flag + " sets it)"
	}
	return boundNames{
		turn:  name("turn-timeout", "agent.turn_timeout_ms", cfg.TurnTimeout),
		stall: name("stall-timeout", "agent.stall_timeout_ms", cfg.StallTimeout),
	}
}

// rename puts the bound's name as the person set it into app's message.
func (b boundNames) rename(msg string) string {
	switch {
	case msg == msgTurnStalled && b.stall != "":
		return "the agent produced no event within " + b.stall
	case msg == msgTurnTimeout && b.turn != "":
		return "the turn exceeded " + b.turn
	}
	return msg
}
