//go:build unix

package faults

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The hostile side: a runtime that speaks just enough ACP to reach the
// phase under test, then misbehaves. Everything here runs in the child
// process, never in the test process.

// lineBound is the documented inbound line bound, terminator excluded.
const lineBound = 10 << 20

// wire is any JSON-RPC message, its members kept raw.
type wire struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

// peer is the runtime's end of the connection.
type peer struct {
	in  *bufio.Reader
	out *os.File
	// onEOF runs when stdin ends; the default exits 0.
	onEOF func()
}

const initDefault = `{"protocolVersion":1,"agentCapabilities":{"loadSession":false},"agentInfo":{"name":"hostile","version":"1"}}`

const initWithClose = `{"protocolVersion":1,"agentCapabilities":{"sessionCapabilities":{"close":{}}},"agentInfo":{"name":"hostile","version":"1"}}`

func (p *peer) raw(s string) {
	if _, err := io.WriteString(p.out, s); err != nil {
		os.Exit(0)
	}
}

func (p *peer) reply(id json.RawMessage, result string) {
	p.raw(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + result + "}\n")
}

func (p *peer) replyErr(id json.RawMessage, code int, msg string) {
	p.raw(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%q}}`+"\n", id, code, msg))
}

func (p *peer) request(id, method, params string) {
	p.raw(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + params + "}\n")
}

// update sends a session/update notification for session sid.
func (p *peer) update(sid, update string) {
	p.raw(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + sid + `","update":` + update + "}}\n")
}

func chunk(text string) string {
	b, _ := json.Marshal(text)
	return `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":` + string(b) + `}}`
}

// next reads one message; it runs onEOF when stdin ends.
func (p *peer) next() wire {
	for {
		line, err := p.in.ReadBytes('\n')
		if err != nil {
			if p.onEOF != nil {
				p.onEOF()
			}
			os.Exit(0)
		}
		var m wire
		if json.Unmarshal(line, &m) == nil {
			return m
		}
	}
}

// await reads until a message naming method arrives.
func (p *peer) await(method string) wire {
	for {
		if m := p.next(); m.Method == method {
			return m
		}
	}
}

// awaitResponse reads until the response with this raw id arrives,
// returning it and every other response seen on the way.
func (p *peer) awaitResponse(id string) (wire, []wire) {
	var others []wire
	for {
		m := p.next()
		if m.Method != "" {
			continue
		}
		if string(m.ID) == id {
			return m, others
		}
		others = append(others, m)
	}
}

func (p *peer) handshake(initResult string) {
	m := p.await("initialize")
	p.reply(m.ID, initResult)
	m = p.await("session/new")
	p.reply(m.ID, `{"sessionId":"s1"}`)
}

// serve answers every prompt end_turn, forever (until stdin ends).
func (p *peer) serve() {
	for {
		m := p.await("session/prompt")
		p.update("s1", chunk("ok"))
		p.reply(m.ID, `{"stopReason":"end_turn"}`)
	}
}

// note appends "key value" to the report file in the working directory.
func note(key string, value any) {
	f, err := os.OpenFile("report", os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s %v\n", key, value)
}

// recordPID appends pid to the pids file in the working directory.
func recordPID(pid int) {
	f, err := os.OpenFile("pids", os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%d\n", pid)
}

func sleepForever() {
	for {
		time.Sleep(time.Hour)
	}
}

func ignoreEOF() { sleepForever() }

// spawn starts a process of this runtime's own tree, recording its PID.
func spawn(cmd *exec.Cmd) *exec.Cmd {
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "spawn:", err)
		os.Exit(70)
	}
	recordPID(cmd.Process.Pid)
	return cmd
}

// self runs this binary as another hostile behaviour.
func self(args ...string) *exec.Cmd {
	exe, _ := os.Executable()
	return exec.Command(exe, append([]string{"hostile"}, args...)...)
}

// paddedUpdate writes one session/update line of exactly n bytes (the
// newline excluded), padding its text with 'a', then a newline.
func (p *peer) paddedUpdate(n int) {
	head := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"`
	tail := `"}}}}`
	w := bufio.NewWriterSize(p.out, 1<<20)
	w.WriteString(head)
	pad := n - len(head) - len(tail)
	block := strings.Repeat("a", 1<<16)
	for pad > 0 {
		k := min(pad, len(block))
		w.WriteString(block[:k])
		pad -= k
	}
	w.WriteString(tail + "\n")
	if w.Flush() != nil {
		os.Exit(0)
	}
}

// hostileMain runs behaviour name with args; it never returns.
func hostileMain(name string, args []string) {
	recordPID(os.Getpid())
	p := &peer{in: bufio.NewReaderSize(os.Stdin, 1<<16), out: os.Stdout}
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	switch name {
	case "echo":
		p.handshake(initDefault)
		p.serve()

	case "argv-echo":
		b, _ := json.Marshal(args)
		note("argv", string(b))
		p.handshake(initDefault)
		p.serve()

	// Crashes, one per phase.
	case "exit":
		// exit <code> <stderr>: before anything is answered.
		fmt.Fprint(os.Stderr, arg(1))
		code, _ := strconv.Atoi(arg(0))
		os.Exit(code)
	case "killed-at-init":
		p.await("initialize")
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		sleepForever()
	case "crash-after-init":
		m := p.await("initialize")
		p.reply(m.ID, initDefault)
		fmt.Fprintln(os.Stderr, "died after initialize")
		os.Exit(5)
	case "crash-during-new":
		m := p.await("initialize")
		p.reply(m.ID, initDefault)
		m = p.await("session/new")
		p.raw(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"resu`)
		fmt.Fprintln(os.Stderr, "died during session/new")
		os.Exit(6)
	case "crash-mid-turn":
		p.handshake(initDefault)
		p.await("session/prompt")
		p.update("s1", chunk("partial"))
		os.Exit(9)
	case "crash-between-turns":
		p.handshake(initDefault)
		m := p.await("session/prompt")
		p.reply(m.ID, `{"stopReason":"end_turn"}`)
		os.Exit(0)

	// Hangs, one per call.
	case "hang-init":
		p.onEOF = ignoreEOF
		for {
			if m := p.next(); m.Method == "initialize" {
				note("initialize", "received")
			}
		}
	case "hang-new":
		p.onEOF = ignoreEOF
		m := p.await("initialize")
		p.reply(m.ID, initDefault)
		for {
			p.next()
		}
	case "hang-prompt":
		// Never answers a prompt; counts the session/cancel it gets, and
		// notes when its stdin ends (everything sent before has been read).
		p.onEOF = func() { note("eof", "reached") }
		p.handshake(initDefault)
		p.await("session/prompt")
		for {
			if m := p.next(); m.Method == "session/cancel" {
				note("cancel", 1)
			}
		}
	case "cancel-answer":
		// Answers session/cancel's prompt with arg(0): "-32800" or a stop reason.
		p.handshake(initDefault)
		for {
			m := p.await("session/prompt")
			p.await("session/cancel")
			if arg(0) == "-32800" {
				p.replyErr(m.ID, -32800, "request cancelled")
			} else {
				p.reply(m.ID, `{"stopReason":"`+arg(0)+`"}`)
			}
		}
	case "stop-reason":
		p.handshake(initDefault)
		m := p.await("session/prompt")
		p.reply(m.ID, `{"stopReason":`+arg(0)+`}`)
		p.serve()
	case "close-hang":
		signal.Ignore(syscall.SIGTERM)
		p.onEOF = func() { note("eof", time.Now().UnixMilli()); os.Exit(0) }
		p.handshake(initWithClose)
		for {
			m := p.next()
			switch m.Method {
			case "session/prompt":
				p.reply(m.ID, `{"stopReason":"end_turn"}`)
			case "session/close":
				note("close", time.Now().UnixMilli())
			}
		}

	// Lines.
	case "garbage":
		for _, g := range []string{"garbage", "{", "[]", "42", `{"jsonrpc":"1.0","id":1}`, "\xff\xfe\xfd", `{"jsonrpc":"2.0"}`} {
			p.raw(g + "\n")
		}
		p.handshake(initDefault)
		m := p.await("session/prompt")
		for _, g := range []string{"not json at all", "}{", `{"jsonrpc":"2.0","method":5}`, "\x00\x01\x02"} {
			p.raw(g + "\n")
		}
		p.update("s1", chunk("still here"))
		p.reply(m.ID, `{"stopReason":"end_turn"}`)
		p.serve()
	case "bad-utf8":
		p.handshake(initDefault)
		m := p.await("session/prompt")
		p.raw(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x` + "\xff\xfe\xc3" + `y"}}}}` + "\n")
		p.raw("\xc3\x28\xa0\xa1\n")
		p.reply(m.ID, `{"stopReason":"end_turn"}`)
		p.serve()
	case "line":
		// line <n>: one update line of exactly n bytes during the turn.
		n, _ := strconv.Atoi(arg(0))
		p.handshake(initDefault)
		m := p.await("session/prompt")
		p.paddedUpdate(n)
		if n > lineBound {
			p.await("session/cancel")
		}
		p.reply(m.ID, `{"stopReason":"end_turn"}`)
		p.serve()
	case "endless-line":
		p.handshake(initDefault)
		p.await("session/prompt")
		p.raw(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"`)
		block := strings.Repeat("z", 1<<20)
		for {
			p.raw(block)
		}

	// Identifiers.
	case "foreign-response-ids":
		p.handshake(initDefault)
		m := p.await("session/prompt")
		id, _ := strconv.Atoi(string(m.ID))
		refusal := `{"stopReason":"refusal"}`
		for _, bad := range []string{"-1", strconv.Quote(string(m.ID)), strconv.Itoa(id) + ".5", "null", `{"id":` + string(m.ID) + `}`, "[" + string(m.ID) + "]", "true", "1e400", "0"} {
			p.reply(json.RawMessage(bad), refusal)
		}
		p.reply(m.ID, `{"stopReason":"end_turn"}`)
		p.serve()
	case "request-ids":
		p.handshake(initDefault)
		m := p.await("session/prompt")
		for _, id := range []string{"0", "-7", `"str"`, "2.5", "1e3", "-0", "123456789012345678901234567890", "null", `{"o":1}`, "[1]", "true"} {
			p.request(id, "fs/read_text_file", `{"sessionId":"s1","path":"/x"}`)
		}
		p.request("99", "fs/read_text_file", `{"sessionId":"s1","path":"/x"}`)
		last, others := p.awaitResponse("99")
		for _, o := range append(others, last) {
			note("answer", string(o.ID)+" "+errCode(o.Error))
		}
		p.reply(m.ID, `{"stopReason":"end_turn"}`)
		p.serve()
	case "duplicate-responses":
		m := p.await("initialize")
		p.reply(m.ID, initDefault)
		p.reply(m.ID, `{"protocolVersion":2}`)
		m = p.await("session/new")
		p.reply(m.ID, `{"sessionId":"s1"}`)
		p.reply(m.ID, `{"sessionId":"s2"}`)
		m = p.await("session/prompt")
		p.reply(m.ID, `{"stopReason":"end_turn"}`)
		p.reply(m.ID, `{"stopReason":"refusal"}`)
		p.replyErr(m.ID, -32603, "late")
		p.serve()
	case "result-and-error":
		p.handshake(initDefault)
		m := p.await("session/prompt")
		p.raw(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"stopReason":"end_turn"},"error":{"code":-32603,"message":"both"}}` + "\n")
		p.serve()
	case "protocol-version":
		m := p.await("initialize")
		if arg(0) == "absent" {
			p.reply(m.ID, `{"agentCapabilities":{},"agentInfo":{"name":"hostile","version":"1"}}`)
		} else {
			p.reply(m.ID, `{"protocolVersion":`+arg(0)+`,"agentCapabilities":{},"agentInfo":{"name":"hostile","version":"1"}}`)
		}
		p.await("session/new")
		note("session-new", "reached")
		sleepForever()
	case "foreign-session":
		p.handshake(initDefault)
		m := p.await("session/prompt")
		p.update("other-session", chunk("FOREIGN"))
		p.update("s1", chunk("mine"))
		p.update("other-session", `{"sessionUpdate":"plan","entries":[]}`)
		p.reply(m.ID, `{"stopReason":"end_turn"}`)
		p.serve()

	// Requests from the runtime.
	case "many-options":
		p.handshake(initDefault)
		m := p.await("session/prompt")
		var b strings.Builder
		b.WriteString(`{"sessionId":"s1","toolCall":{"toolCallId":"t1","title":"x"},"options":[`)
		for i := range 9999 {
			fmt.Fprintf(&b, `{"optionId":"a%d","name":"allow","kind":"allow_once"},`, i)
		}
		b.WriteString(`{"optionId":"r-last","name":"no","kind":"reject_once"}]}`)
		p.request("500", "session/request_permission", b.String())
		resp, _ := p.awaitResponse("500")
		note("permission", string(resp.Result))
		p.reply(m.ID, `{"stopReason":"end_turn"}`)
		p.serve()
	case "permission-null":
		p.handshake(initDefault)
		m := p.await("session/prompt")
		p.raw(`{"jsonrpc":"2.0","id":501,"method":"session/request_permission","params":null}` + "\n")
		p.raw(`{"jsonrpc":"2.0","id":502,"method":"session/request_permission"}` + "\n")
		r1, _ := p.awaitResponse("501")
		r2, _ := p.awaitResponse("502")
		note("null", errCode(r1.Error))
		note("missing", errCode(r2.Error))
		p.update("s1", chunk("went on"))
		p.reply(m.ID, `{"stopReason":"end_turn"}`)
		p.serve()
	case "client-methods":
		p.handshake(initDefault)
		m := p.await("session/prompt")
		methods := []string{"fs/read_text_file", "fs/write_text_file", "terminal/create", "terminal/output", "terminal/kill", "x/unknown"}
		for i, meth := range methods {
			p.request(strconv.Itoa(600+i), meth, `{"sessionId":"s1"}`)
		}
		for i := range methods {
			r, _ := p.awaitResponse(strconv.Itoa(600 + i))
			note("answer", errCode(r.Error)+" "+string(r.Error))
		}
		p.reply(m.ID, `{"stopReason":"end_turn"}`)
		p.serve()
	case "elicitation":
		p.handshake(initDefault)
		m := p.await("session/prompt")
		p.request("700", "elicitation/create", `{"sessionId":"s1","message":"your name?","requestedSchema":{"type":"object"}}`)
		r, _ := p.awaitResponse("700")
		note("elicitation", errCode(r.Error))
		p.await("session/cancel")
		p.reply(m.ID, `{"stopReason":"cancelled"}`)
		p.serve()
	case "deaf-flood":
		// Stops reading stdin at the prompt and floods requests.
		p.handshake(initDefault)
		p.await("session/prompt")
		note("deaf", "yes")
		w := bufio.NewWriterSize(p.out, 1<<16)
		for i := 1000; ; i++ {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":"fs/read_text_file","params":{"sessionId":"s1","path":"/%s"}}`+"\n", i, strings.Repeat("p", 200))
			if i%50 == 0 && w.Flush() != nil {
				os.Exit(0)
			}
		}

	// Processes.
	case "term-tree":
		// A leader and <n> more processes, all ignoring SIGTERM.
		n, _ := strconv.Atoi(arg(0))
		signal.Ignore(syscall.SIGTERM)
		for range n {
			spawn(exec.Command("/bin/sh", "-c", "trap '' TERM; while :; do sleep 1; done"))
		}
		p.onEOF = ignoreEOF
		p.handshake(initDefault)
		p.serve()
	case "fork-storm":
		n, _ := strconv.Atoi(arg(0))
		for range n {
			spawn(exec.Command("sleep", "300"))
		}
		for range n / 2 {
			_ = exec.Command("true").Run()
		}
		p.handshake(initDefault)
		p.serve()
	case "drain-hold":
		p.handshake(initDefault)
		p.await("session/prompt")
		c := exec.Command("sleep", "300")
		c.Stdout = os.Stdout
		spawn(c)
		os.Exit(0)
	case "setsid-leader":
		p.onEOF = ignoreEOF
		if _, err := syscall.Setsid(); err != nil {
			note("setsid", err)
			c := exec.Command("sleep", "300")
			c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			spawn(c)
			note("setpgid", syscall.Setpgid(0, c.Process.Pid))
		} else {
			note("setsid", "ok")
		}
		note("pgid", syscall.Getpgrp())
		p.handshake(initDefault)
		p.serve()
	case "double-fork":
		mid := self("double-fork-mid")
		if err := mid.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "mid:", err)
			os.Exit(71)
		}
		p.handshake(initDefault)
		p.serve()
	case "double-fork-mid":
		c := exec.Command("sleep", "300")
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		spawn(c)
		os.Exit(0)
	case "stderr-flood":
		// 2 GiB of stderr, then an early exit.
		line := strings.Repeat("x", 127) + "\n"
		buf := []byte(strings.Repeat(line, (1<<20)/len(line)))
		for range 2048 {
			if _, err := os.Stderr.Write(buf); err != nil {
				os.Exit(72)
			}
		}
		fmt.Fprint(os.Stderr, "final words\n")
		os.Exit(7)
	case "flood-between":
		// After the first turn, <n> thought chunks, then a normal session.
		n, _ := strconv.Atoi(arg(0))
		p.handshake(initDefault)
		m := p.await("session/prompt")
		p.reply(m.ID, `{"stopReason":"end_turn"}`)
		line := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"t"}}}}` + "\n"
		w := bufio.NewWriterSize(p.out, 1<<20)
		for range n {
			w.WriteString(line)
		}
		if w.Flush() != nil {
			os.Exit(0)
		}
		p.serve()
	}
	if hostileV2(p, name) { // the ACP v2 behaviours (v2_test.go)
		os.Exit(0)
	}
	if hostilePermissions(p, name) || hostileLies(p, name) { // the permission requests (permission_test.go), the runtimes that lie about a failure (lies_test.go)
		os.Exit(0)
	}
	fmt.Fprintln(os.Stderr, "hostile: unknown behaviour", name)
	os.Exit(64)
}

// errCode renders a raw error member's code, or "none".
func errCode(raw json.RawMessage) string {
	var e struct {
		Code *int `json:"code"`
	}
	if json.Unmarshal(raw, &e) != nil || e.Code == nil {
		return "none"
	}
	return strconv.Itoa(*e.Code)
}
