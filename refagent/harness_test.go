package refagent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(subprocessEnv) != "" {
		runSubprocessAgent()
		return
	}
	goleak.VerifyTestMain(m)
}

// waitFor bounds every wait of the tests.
const waitFor = 10 * time.Second

// lockedBuffer is a goroutine-safe bytes.Buffer for stderr.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// harness runs Main in-process over two io.Pipes.
type harness struct {
	t      *testing.T
	in     *io.PipeWriter
	lines  chan string
	done   chan int
	stderr *lockedBuffer
	code   *int
	cancel context.CancelFunc // ends Main's context
}

func startAgent(t *testing.T, args ...string) *harness {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{t: t, in: inW, lines: make(chan string, 1024), done: make(chan int, 1), stderr: &lockedBuffer{}, cancel: cancel}
	go func() {
		code := Main(ctx, args, inR, outW, h.stderr)
		_ = outW.Close()
		h.done <- code
	}()
	go func() {
		defer close(h.lines)
		br := bufio.NewReaderSize(outR, 1<<20)
		for {
			line, err := br.ReadString('\n')
			if line != "" {
				h.lines <- strings.TrimSuffix(line, "\n")
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = inW.Close()
		defer cancel()
		if h.code == nil {
			h.wait()
		}
		for range h.lines {
		}
	})
	return h
}

// send writes one line to the agent's stdin.
func (h *harness) send(line string) {
	h.t.Helper()
	errc := make(chan error, 1)
	go func() {
		_, err := io.WriteString(h.in, line+"\n")
		errc <- err
	}()
	select {
	case err := <-errc:
		if err != nil {
			h.t.Fatalf("send %s: %v", line, err)
		}
	case <-time.After(waitFor):
		h.t.Fatalf("send %s: timed out", line)
	}
}

// next returns the agent's next stdout line.
func (h *harness) next() string {
	h.t.Helper()
	select {
	case line, ok := <-h.lines:
		if !ok {
			h.t.Fatalf("stdout ended; stderr: %s", h.stderr.String())
		}
		return line
	case <-time.After(waitFor):
		h.t.Fatalf("no line from the agent within %v; stderr: %s", waitFor, h.stderr.String())
	}
	return ""
}

// expect asserts the exact next lines.
func (h *harness) expect(want ...string) {
	h.t.Helper()
	for _, w := range want {
		if got := h.next(); got != w {
			h.t.Fatalf("line mismatch\n got: %s\nwant: %s", truncate(got), w)
		}
	}
}

// quiet asserts that no line arrives within d.
func (h *harness) quiet(d time.Duration) {
	h.t.Helper()
	select {
	case line, ok := <-h.lines:
		if ok {
			h.t.Fatalf("unexpected line: %s", truncate(line))
		}
	case <-time.After(d):
	}
}

// closeStdin ends stdin and returns the exit code.
func (h *harness) closeStdin() int {
	h.t.Helper()
	_ = h.in.Close()
	return h.wait()
}

// wait returns Main's exit code.
func (h *harness) wait() int {
	h.t.Helper()
	select {
	case code := <-h.done:
		h.code = &code
		return code
	case <-time.After(waitFor):
		h.t.Fatalf("Main did not return within %v", waitFor)
	}
	return -1
}

// rest returns every remaining stdout line (until stdout closes).
func (h *harness) rest() []string {
	h.t.Helper()
	var out []string
	timeout := time.After(waitFor)
	for {
		select {
		case line, ok := <-h.lines:
			if !ok {
				return out
			}
			out = append(out, line)
		case <-timeout:
			h.t.Fatalf("stdout did not end")
		}
	}
}

func truncate(s string) string {
	if len(s) > 300 {
		return s[:300] + "…(" + jsonNumber(len(s)) + " bytes)"
	}
	return s
}

func jsonNumber(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// Wire lines used by many tests.
const (
	initReq  = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false},"clientInfo":{"name":"test","version":"1"}}}`
	initResp = `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":false,"promptCapabilities":{},"mcpCapabilities":{"http":false,"sse":false}},"agentInfo":{"name":"acpdrive-reference-agent","title":"acpdrive reference agent","version":"0.1.0"},"authMethods":[]}}`
	newReq   = `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/tmp","mcpServers":[]}}`
	newResp  = `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"ref-1"}}`
)

// prompt renders a session/prompt request with one text block.
func prompt(id int, session, text string) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "session/prompt",
		"params": map[string]any{"sessionId": session, "prompt": []any{map[string]any{"type": "text", "text": text}}}})
	return string(b)
}

// chunk renders the agent_message_chunk line the agent writes.
func chunk(session, messageID, text string) string {
	return update(session, `{"sessionUpdate":"agent_message_chunk","messageId":`+quote(messageID)+`,"content":{"type":"text","text":`+quote(text)+`}}`)
}

func update(session, u string) string {
	return `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":` + quote(session) + `,"update":` + u + `}}`
}

func stopLine(id int, reason string) string {
	return `{"jsonrpc":"2.0","id":` + jsonNumber(id) + `,"result":{"stopReason":` + quote(reason) + `}}`
}

func quote(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(buf.String(), "\n")
}

// openSession starts an agent and opens session ref-1.
func openSession(t *testing.T, args ...string) *harness {
	t.Helper()
	h := startAgent(t, args...)
	h.send(initReq)
	h.next()
	h.send(newReq)
	h.expect(newResp)
	return h
}

// subprocessEnv, when set, makes the test binary run the agent itself with
// the JSON-encoded argument list in subprocessArgsEnv (see process_test.go).
const (
	subprocessEnv     = "REFAGENT_TEST_SUBPROCESS"
	subprocessArgsEnv = "REFAGENT_TEST_ARGS"
)

func runSubprocessAgent() {
	var args []string
	if err := json.Unmarshal([]byte(os.Getenv(subprocessArgsEnv)), &args); err != nil {
		os.Stderr.WriteString("bad " + subprocessArgsEnv + ": " + err.Error() + "\n")
		os.Exit(99)
	}
	os.Exit(Main(context.Background(), args, os.Stdin, os.Stdout, os.Stderr))
}
