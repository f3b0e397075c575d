package main

import (
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
	// Failure is the class of a turn that did not complete
	// (docs/behaviour.md#failures).
	Failure *domain.Failure `json:"failure,omitempty"`
}

// startupFailedLine is the JSON line printed when the session cannot start.
type startupFailedLine struct {
	Type      string    `json:"type"`
	Time      time.Time `json:"time"`
	ErrorKind string    `json:"error_kind"`
	Message   string    `json:"message"`
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
}

// printer renders a run either as JSON lines or for a person.
type printer struct {
	host   string // the SSH host that ran the session, "" locally
	json   bool
	out    io.Writer // buf, written with mu held
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
	title     string // the session title last shown
	mode      string // the mode last shown
}

// newPrinter prints to stdout through a buffer (flushWriter) that is
// written out when the session waits for the runtime (idle), within
// maxOutputLatency otherwise, and when the run ends (close).
func newPrinter(jsonOut bool, stdout, stderr io.Writer) *printer {
	p := &printer{json: jsonOut}
	p.buf = newFlushWriter(stdout, &p.mu)
	p.out = p.buf
	p.enc = json.NewEncoder(p.buf)
	p.enc.SetEscapeHTML(false)
	p.eager = isTerminal(stdout)
	if !jsonOut && p.eager {
		p.status = newStatusLine(stderr)
	}
	return p
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
	p.clearStatus()
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
	p.clearStatus()
	if ev.ParentSessionID != "" {
		p.childEvent(ev)
		return
	}
	switch ev.Type {
	case domain.EventNotification:
		if ev.Message != "" {
			p.endLine()
			if !p.streamed {
				// Not the report of a streamed reply: a notice.
				fmt.Fprintf(p.out, "· %s\n", ev.Message)
			}
			p.streamed = false
			p.updateStatus(ev.Message)
			return
		}
	case domain.EventToolResult:
		p.endLine()
		p.tools++
		mark := "ok"
		if ev.ToolError {
			mark = "failed"
		}
		fmt.Fprintf(p.out, "⚙ %s %s (%d ms) %s\n", ev.ToolName, mark, ev.ToolDurationMS, ev.Message)
	case domain.EventOtherMessage, domain.EventMalformed:
		p.endLine()
		fmt.Fprintf(p.out, "· [%s] %s\n", ev.Type, ev.Message)
	case domain.EventRuntimeNotice:
		p.endLine()
		fmt.Fprintf(p.out, "· notice: %s\n", ev.Message)
	case domain.EventRuntimeRetrying:
		p.endLine()
		fmt.Fprintf(p.out, "· %s\n", ev.Message)
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
	case domain.EventSessionStarted:
		p.tools = 0
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

func (p *printer) turnResult(n int, res domain.TurnResult) {
	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.buf.flush() // a result is a boundary the reader waits for
	if p.json {
		line := turnResultLine{Type: "turn_result", Turn: n, Outcome: string(res.Outcome),
			StopReason: res.StopReason, Message: res.Message(), Usage: res.Usage, Model: res.Model,
			Source: res.Source, Breakdown: res.Breakdown, Cost: res.Cost, Context: res.Context,
			Reply: res.Reply, ReplyCut: res.ReplyCut, Failure: res.Failure}
		if res.Err != nil {
			retry := res.Retryable()
			line.ErrorKind, line.Retryable = string(res.Err.Kind), &retry
		}
		_ = p.enc.Encode(line)
		return
	}
	p.clearStatus()
	p.endLine()
	summary := fmt.Sprintf("turn %d: %s", n, res.Outcome)
	if res.StopReason != "" {
		summary += " (stop reason " + res.StopReason + ")"
	}
	if res.Err != nil {
		summary += fmt.Sprintf(": %s [%s, retryable=%t]", res.Err.Message, res.Err.Kind, res.Retryable())
	}
	if res.Failure != nil && res.Failure.Class != domain.FailureUnknown {
		summary += "\n── failure: " + res.Failure.Text()
	}
	if p.status != nil {
		summary += fmt.Sprintf(" in %s, %d tool calls", p.status.elapsed().Round(time.Millisecond), p.tools)
	}
	summary += "; tokens: " + usageText(res.Usage, res.Model)
	if res.Cost != nil {
		summary += "; cost " + domain.CostText(*res.Cost)
	}
	if res.Context != nil {
		summary += "; context " + domain.ContextText(*res.Context)
	}
	fmt.Fprintf(p.out, "── %s\n", summary)
}

func (p *printer) startupFailed(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.buf.flush() // a result is a boundary the reader waits for
	kind, msg := "", err.Error()
	var ae *domain.AgentError
	if errors.As(err, &ae) {
		kind, msg = string(ae.Kind), ae.Message
	}
	if p.json {
		_ = p.enc.Encode(startupFailedLine{Type: "startup_failed", Time: time.Now().UTC(), ErrorKind: kind, Message: msg})
		return
	}
	p.clearStatus()
	fmt.Fprintf(p.out, "session could not start: %s\n", err)
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
			ToolServers: sess.AgentInfo().ToolServers, ForkedFrom: sess.ForkedFrom(), ProtocolVersion: sess.AgentInfo().ProtocolVersion}
		line.Mode, line.Config = postureFields(sess.Posture())
		line.Model = sess.Posture().Model
		if end.budget.tokens.Measured > 0 {
			used := end.budget.tokens.Used
			line.Usage = &used
		}
		line.Cost = end.budget.cost.Spent
		_ = p.enc.Encode(line)
		return
	}
	p.clearStatus()
	fmt.Fprintf(p.out, "session %s (pid %d): %d turn(s)", sess.ID(), sess.PID(), turns)
	if from := sess.ForkedFrom(); from != "" {
		fmt.Fprintf(p.out, "; forked from %s", from)
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
