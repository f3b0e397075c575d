package refagent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// exitCodeSIGTERM is what Main returns when SIGTERM ends the process.
const exitCodeSIGTERM = 143

// shutdownWait bounds how long Main waits for its goroutines when it returns
// (only a write blocked on a stdout nobody reads takes longer than a moment).
const shutdownWait = time.Second

// capabilities are the parts of the advertised agentCapabilities the agent's
// own defaults depend on.
type capabilities struct {
	loadSession bool
	resume      bool
	list        bool
	fork        bool
}

type session struct {
	id    string
	turn  *turnRun         // the turn still waiting for its response, if any
	usage map[string]int64 // the running total of its usage (Script.UsageRunningTotal)
}

type pendingCall struct {
	ch chan *inMsg
}

// agent is one running reference agent.
type agent struct {
	script        *Script
	out           *lineWriter
	stderr        io.Writer
	stdoutFile    *os.File // what a spawned descendant inherits as stdout
	stderrFile    *os.File
	log           *eventLog
	ignoreSigterm bool
	caps          capabilities
	protocol      string      // --protocol: "1", "2" or "auto"
	v2            atomic.Bool // the connection negotiated ACP v2

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	exitOnce sync.Once
	exitCh   chan int

	mu          sync.Mutex
	sessions    map[string]*session
	newSessions int
	mcpServers  json.RawMessage // the last session/new's mcpServers
	forks       int
	turns       int
	nextReqID   int64
	pending     map[string]*pendingCall
	sent        map[string]string       // request id → method, of every request the agent sent
	calls       map[string]int          // method → number of requests received
	configs     map[string]*configState // session id → configuration (Script.SessionConfig)
	replaced    map[*Turn]*Turn         // a turn that ran → its Turn.Next
}

func newAgent(script *Script, stdout, stderr io.Writer) *agent {
	a := &agent{
		script:   script,
		out:      &lineWriter{w: stdout},
		stderr:   &syncWriter{w: stderr},
		exitCh:   make(chan int, 1),
		sessions: make(map[string]*session),
		pending:  make(map[string]*pendingCall),
		sent:     make(map[string]string),
		calls:    make(map[string]int),
	}
	a.ctx, a.cancel = context.WithCancel(context.Background())
	if f, ok := stdout.(*os.File); ok {
		a.stdoutFile = f
	} else {
		a.stdoutFile = os.Stdout
	}
	if f, ok := stderr.(*os.File); ok {
		a.stderrFile = f
	} else {
		a.stderrFile = os.Stderr
	}
	a.caps = parseCapabilities(a.agentCapabilities())
	return a
}

func (a *agent) agentCapabilities() json.RawMessage {
	if in := a.script.Initialize; in != nil && in.AgentCapabilities != nil {
		return in.AgentCapabilities
	}
	return json.RawMessage(`{"loadSession":false,"promptCapabilities":{},"mcpCapabilities":{"http":false,"sse":false}}`)
}

func parseCapabilities(raw json.RawMessage) capabilities {
	var c struct {
		LoadSession         bool                       `json:"loadSession"`
		SessionCapabilities map[string]json.RawMessage `json:"sessionCapabilities"`
	}
	_ = json.Unmarshal(raw, &c)
	marked := func(k string) bool {
		v, ok := c.SessionCapabilities[k]
		return ok && len(v) > 0 && v[0] == '{'
	}
	return capabilities{loadSession: c.LoadSession, resume: marked("resume"), list: marked("list"), fork: marked("fork")}
}

// run serves the protocol until stdin ends, an exit is scripted, SIGTERM
// arrives (unless ignored) or ctx ends, and returns the exit code.
func (a *agent) run(ctx context.Context, stdin io.Reader, sigs <-chan os.Signal) int {
	done := make(chan struct{})
	defer close(done)
	lines := make(chan []byte)
	go readLines(stdin, lines, done)

	if len(a.script.Startup) > 0 {
		sc := &stepCtx{}
		_ = a.runSteps(a.ctx, sc, a.script.Startup)
	}
	for {
		select {
		case code := <-a.exitCh:
			return a.finish(code)
		default:
		}
		select {
		case code := <-a.exitCh:
			return a.finish(code)
		case line, ok := <-lines:
			if !ok {
				a.log.add(LogRecord{Kind: "eof"})
				if a.script.StdinEOF == EOFKeepRunning {
					lines = nil
					continue
				}
				return a.finish(0)
			}
			a.dispatch(line)
		case <-sigs:
			a.log.add(LogRecord{Kind: "signal", Signal: "SIGTERM"})
			if a.ignoreSigterm {
				fmt.Fprintln(a.stderr, "acpdrive reference agent: ignoring SIGTERM")
				continue
			}
			return a.finish(exitCodeSIGTERM)
		case <-ctx.Done():
			return a.finish(0)
		}
	}
}

// finish stops every goroutine of the agent and returns code.
func (a *agent) finish(code int) int {
	a.cancel()
	a.out.close()
	waited := make(chan struct{})
	go func() {
		a.wg.Wait()
		close(waited)
	}()
	select {
	case <-waited:
	case <-time.After(shutdownWait):
	}
	return code
}

// exit ends the process with e.Code: the first exit wins.
func (a *agent) exit(e Exit) {
	a.exitOnce.Do(func() {
		if e.Stderr != "" {
			_, _ = io.WriteString(a.stderr, e.Stderr)
		}
		a.out.close()
		a.exitCh <- e.Code
	})
}

func readLines(r io.Reader, out chan<- []byte, done <-chan struct{}) {
	defer close(out)
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			select {
			case out <- line:
			case <-done:
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// dispatch classifies one line from stdin and acts on it.
func (a *agent) dispatch(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	if !json.Valid(line) {
		a.log.add(LogRecord{Kind: "invalid", Raw: string(line)})
		a.writeResponse(nullID, nil, &RPCError{Code: codeParseError, Message: "Parse error"})
		return
	}
	var m inMsg
	if line[0] != '{' || json.Unmarshal(line, &m) != nil {
		a.log.add(LogRecord{Kind: "invalid", Message: compact(line)})
		a.writeResponse(nullID, nil, &RPCError{Code: codeInvalidRequest, Message: "Invalid Request"})
		return
	}
	switch {
	case m.Method != "" && m.ID != nil:
		a.log.add(LogRecord{Kind: "request", Method: m.Method, ID: m.ID, Message: compact(line)})
		a.handleRequest(&m)
	case m.Method != "":
		a.log.add(LogRecord{Kind: "notification", Method: m.Method, Message: compact(line)})
		a.handleNotification(&m)
	case m.ID != nil:
		key := idKey(m.ID)
		a.mu.Lock()
		method := a.sent[key]
		p := a.pending[key]
		delete(a.pending, key)
		a.mu.Unlock()
		a.log.add(LogRecord{Kind: "response", ID: m.ID, Answers: method, Message: compact(line)})
		if p != nil {
			p.ch <- &m
		}
	default:
		a.log.add(LogRecord{Kind: "invalid", Message: compact(line)})
		a.writeResponse(nullID, nil, &RPCError{Code: codeInvalidRequest, Message: "Invalid Request"})
	}
}

func compact(b []byte) json.RawMessage {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return nil
	}
	return buf.Bytes()
}

func idKey(id json.RawMessage) string { return string(compact(id)) }

// writeMsg writes one message as one line.
func (a *agent) writeMsg(m outMsg) error {
	m.JSONRPC = "2.0"
	line, err := encodeLine(m)
	if err != nil {
		return err
	}
	return a.out.write(line)
}

func (a *agent) writeResponse(id json.RawMessage, result any, e *RPCError) {
	if e != nil {
		_ = a.writeMsg(outMsg{ID: id, Error: e})
		return
	}
	if result == nil {
		result = json.RawMessage("null")
	}
	_ = a.writeMsg(outMsg{ID: id, Result: result})
}

func methodNotFound(method string) *RPCError {
	data, _ := json.Marshal(map[string]string{"method": method})
	return &RPCError{Code: codeMethodNotFound, Message: "Method not found", Data: data}
}

func invalidParams(detail string) *RPCError {
	return &RPCError{Code: codeInvalidParams, Message: "Invalid params: " + detail}
}

// reply returns the scripted Reply for the next call of method, or nil.
func (a *agent) reply(method string) *Reply {
	a.mu.Lock()
	a.calls[method]++
	n := a.calls[method]
	a.mu.Unlock()
	list, ok := a.script.Methods[method]
	if !ok {
		best := ""
		for k := range a.script.Methods {
			if p, isPrefix := strings.CutSuffix(k, "*"); isPrefix && strings.HasPrefix(method, p) && len(k) > len(best) {
				best = k
			}
		}
		if best == "" {
			return nil
		}
		list = a.script.Methods[best]
	}
	if len(list) == 0 {
		return nil
	}
	if n > len(list) {
		n = len(list)
	}
	r := list[n-1]
	return &r
}

// serve carries out reply r (nil: the default) for request m. def computes
// the default answer; ok runs just before a successful answer is written.
func (a *agent) serve(m *inMsg, r *Reply, sc *stepCtx, def func() (any, *RPCError), ok func()) {
	if r == nil {
		r = &Reply{}
	}
	if r.immediate() {
		a.serveNow(m, r, sc, def, ok)
		return
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		a.serveNow(m, r, sc, def, ok)
	}()
}

func (a *agent) serveNow(m *inMsg, r *Reply, sc *stepCtx, def func() (any, *RPCError), ok func()) {
	ctx := a.ctx
	if r.DelayMs > 0 && !sleepCtx(ctx, time.Duration(r.DelayMs)*time.Millisecond) {
		return
	}
	if a.runSteps(ctx, sc, r.Before) != nil {
		return
	}
	switch {
	case r.Exit != nil:
		a.exit(*r.Exit)
		return
	case r.Never:
	case r.Error != nil:
		a.writeResponse(m.ID, nil, r.Error)
	case r.Result != nil:
		if ok != nil {
			ok()
		}
		a.writeResponse(m.ID, r.Result, nil)
	default:
		res, e := def()
		if e == nil && ok != nil {
			ok()
		}
		a.writeResponse(m.ID, res, e)
	}
	if a.runSteps(ctx, sc, r.After) != nil {
		return
	}
	if r.ExitAfter != nil {
		a.exit(*r.ExitAfter)
	}
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (a *agent) handleRequest(m *inMsg) {
	switch m.Method {
	case "initialize":
		a.handleInitialize(m)
	case "session/new":
		a.handleNew(m)
	case "session/prompt":
		a.handlePrompt(m)
	case "session/load":
		a.handleContinue(m, a.caps.loadSession, defaultLoadReply())
	case "session/resume":
		if a.v2.Load() {
			a.resumeV2(m)
			return
		}
		a.handleContinue(m, a.caps.resume, nil)
	case "session/close":
		a.handleClose(m)
	case "session/set_config_option", "session/set_mode", "session/set_model":
		r := a.reply(m.Method)
		if a.script.SessionConfig != nil && r == nil {
			a.handleConfigCall(m)
			return
		}
		a.serveOther(m, r)
	case "session/fork":
		a.handleFork(m)
	case "_session/steering":
		if !a.script.Steering || a.reply(m.Method) != nil {
			a.handleOther(m)
			return
		}
		a.handleSteer(m)
	default:
		a.handleOther(m)
	}
}

func (a *agent) handleInitialize(m *inMsg) {
	in := a.script.Initialize
	if in == nil {
		in = &Initialize{}
	}
	version, refuse := a.negotiate(m.Params)
	def := func() (any, *RPCError) {
		if refuse != nil {
			return nil, refuse
		}
		res := initResult{
			ProtocolVersion:   1,
			AgentCapabilities: a.agentCapabilities(),
			AgentInfo:         in.AgentInfo,
			AuthMethods:       in.AuthMethods,
		}
		if in.ProtocolVersion != nil {
			res.ProtocolVersion = *in.ProtocolVersion
		}
		if res.AgentInfo == nil {
			info, _ := json.Marshal(struct {
				Name    string `json:"name"`
				Title   string `json:"title"`
				Version string `json:"version"`
			}{AgentName, AgentTitle, Version})
			res.AgentInfo = info
		}
		if in.OmitAgentInfo {
			res.AgentInfo = nil
		}
		if res.AuthMethods == nil {
			res.AuthMethods = json.RawMessage("[]")
		}
		if a.script.Steering {
			res.Meta = json.RawMessage(`{"steering":{"supported":true}}`)
		}
		if version == 2 {
			a.v2.Store(true)
			return v2InitResult(res), nil
		}
		return res, nil
	}
	r := in.Reply
	a.serve(m, &r, &stepCtx{}, def, nil)
}

func (a *agent) handleNew(m *inMsg) {
	var p struct {
		Cwd        *string         `json:"cwd"`
		McpServers json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(orEmpty(m.Params), &p); err != nil {
		a.writeResponse(m.ID, nil, invalidParams("session/new params must be an object with a string cwd and an array mcpServers"))
		return
	}
	if p.Cwd == nil || !filepath.IsAbs(*p.Cwd) {
		a.writeResponse(m.ID, nil, invalidParams("cwd must be an absolute path"))
		return
	}
	if mcp := bytes.TrimSpace(p.McpServers); len(mcp) == 0 || mcp[0] != '[' {
		a.writeResponse(m.ID, nil, invalidParams("mcpServers must be an array"))
		return
	}
	r := a.reply("session/new")
	a.mu.Lock()
	a.mcpServers = append(json.RawMessage(nil), p.McpServers...)
	a.newSessions++
	id := "ref-" + strconv.Itoa(a.newSessions)
	a.mu.Unlock()
	id = scriptedSessionID(r, id)
	def := func() (any, *RPCError) { return newSessionResult{SessionID: id}, nil }
	if a.script.SessionConfig != nil {
		def = func() (any, *RPCError) { return a.configAnswer(id, true), nil }
	}
	a.serve(m, r, &stepCtx{session: id}, def, func() { a.register(id) })
}

func orEmpty(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

func (a *agent) register(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.sessions[id] == nil {
		a.sessions[id] = &session{id: id}
	}
}

func sessionIDParam(params json.RawMessage) (string, bool) {
	var p struct {
		SessionID *string `json:"sessionId"`
	}
	if json.Unmarshal(orEmpty(params), &p) != nil || p.SessionID == nil {
		return "", false
	}
	return *p.SessionID, true
}

// defaultLoadReply replays one exchange before answering {}.
func defaultLoadReply() *Reply {
	return &Reply{Before: []Step{
		{Step: StepUserText, Text: "(replayed prompt)", MessageID: strPtr("replay-user")},
		{Step: StepText, Text: "(replayed answer)", MessageID: strPtr("replay-agent")},
	}}
}

func strPtr(s string) *string { return &s }

// handleContinue serves session/load and session/resume.
func (a *agent) handleContinue(m *inMsg, advertised bool, def *Reply) {
	r := a.reply(m.Method)
	if r == nil && !advertised {
		a.writeResponse(m.ID, nil, methodNotFound(m.Method))
		return
	}
	id, ok := sessionIDParam(m.Params)
	if !ok {
		a.writeResponse(m.ID, nil, invalidParams("sessionId must be a string"))
		return
	}
	if r == nil {
		r = def
	}
	answer := func() (any, *RPCError) { return emptyObject, nil }
	if a.script.SessionConfig != nil {
		answer = func() (any, *RPCError) { return a.configAnswer(id, false), nil }
	}
	a.serve(m, r, &stepCtx{session: id}, answer, func() { a.register(id) })
}

func (a *agent) handleClose(m *inMsg) {
	id, ok := sessionIDParam(m.Params)
	if !ok {
		a.writeResponse(m.ID, nil, invalidParams("sessionId must be a string"))
		return
	}
	r := a.reply(m.Method)
	a.closeTurns(id)
	a.serve(m, r, &stepCtx{session: id},
		func() (any, *RPCError) { return emptyObject, nil },
		func() {
			a.mu.Lock()
			delete(a.sessions, id)
			a.mu.Unlock()
		})
}

// handleOther serves every other request: scripted, else the built-in
// default, else -32601.
func (a *agent) handleOther(m *inMsg) { a.serveOther(m, a.reply(m.Method)) }

// serveOther is handleOther with the scripted reply r already taken.
func (a *agent) serveOther(m *inMsg, r *Reply) {
	sid, _ := sessionIDParam(m.Params)
	var def func() (any, *RPCError)
	switch m.Method {
	case "session/delete", "authenticate", "logout", "session/set_mode":
		def = func() (any, *RPCError) { return emptyObject, nil }
	case "session/set_config_option":
		def = func() (any, *RPCError) { return json.RawMessage(`{"configOptions":[]}`), nil }
	case "session/list":
		if a.caps.list {
			def = func() (any, *RPCError) { return json.RawMessage(`{"sessions":[]}`), nil }
		}
	}
	if def == nil {
		def = func() (any, *RPCError) { return nil, methodNotFound(m.Method) }
	}
	a.serve(m, r, &stepCtx{session: sid}, def, nil)
}

func (a *agent) handleNotification(m *inMsg) {
	switch m.Method {
	case "session/cancel":
		if id, ok := sessionIDParam(m.Params); ok {
			a.cancelSession(id, false)
		}
	case "$/cancel_request":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(orEmpty(m.Params), &p) != nil || p.RequestID == nil {
			return
		}
		key := idKey(p.RequestID)
		a.mu.Lock()
		var target *turnRun
		for _, s := range a.sessions {
			if s.turn != nil && idKey(s.turn.id) == key {
				target = s.turn
			}
		}
		a.mu.Unlock()
		if target != nil {
			a.cancelTurn(target, true)
		}
	}
	// Every other notification is logged (by dispatch) and ignored.
}

// cancelSession cancels the running turn of session id, if any.
func (a *agent) cancelSession(id string, viaRequest bool) {
	a.mu.Lock()
	var t *turnRun
	if s := a.sessions[id]; s != nil {
		t = s.turn
	}
	a.mu.Unlock()
	if t != nil {
		a.cancelTurn(t, viaRequest)
	}
}

// call sends a request and waits for its answer; ctx ending abandons it.
func (a *agent) call(ctx context.Context, method string, params any, wait, cancelRequests bool) (*inMsg, error) {
	a.mu.Lock()
	n := a.nextReqID
	a.nextReqID++
	a.mu.Unlock()
	var id json.RawMessage
	if a.script.StringRequestIDs {
		id, _ = json.Marshal("r-" + strconv.FormatInt(n, 10))
	} else {
		id = json.RawMessage(strconv.FormatInt(n, 10))
	}
	key := idKey(id)
	p := &pendingCall{ch: make(chan *inMsg, 1)}
	a.mu.Lock()
	a.sent[key] = method
	if wait {
		a.pending[key] = p
	}
	a.mu.Unlock()
	if err := a.writeMsg(outMsg{ID: id, Method: method, Params: params}); err != nil {
		return nil, errShutdown
	}
	if !wait {
		return nil, nil
	}
	select {
	case resp := <-p.ch:
		return resp, nil
	case <-ctx.Done():
		a.mu.Lock()
		delete(a.pending, key)
		a.mu.Unlock()
		if cancelRequests && a.ctx.Err() == nil {
			_ = a.writeMsg(outMsg{Method: "$/cancel_request", Params: cancelRequestParams{RequestID: id}})
		}
		return nil, a.ctxErr()
	}
}

// scriptedSessionID is the sessionId a scripted reply's result names, or
// id when it names none.
func scriptedSessionID(r *Reply, id string) string {
	if r == nil || r.Result == nil {
		return id
	}
	var res struct {
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(r.Result, &res) == nil && res.SessionID != "" {
		return res.SessionID
	}
	return id
}
