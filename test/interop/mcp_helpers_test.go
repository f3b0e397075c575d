//go:build interop

package interop

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/internal/testsupport/eventrec"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// The interop suite's own MCP server (test/mcpserver, a module of its own
// built on the official MCP Go SDK, so the SDK never enters acpdrive's
// go.mod). Each test process builds it once, from source, with `go build`
// into .cache/runtimes/bin/acpdrive-interop-mcpserver (git-ignored, so
// nothing is left in /tmp); the Go build cache makes a rebuild take well
// under a second, and the SDK comes from the Go module proxy on a fresh
// machine.

var (
	mcpServerOnce sync.Once
	mcpServerPath string
	mcpServerErr  error
)

// mcpServerBin returns the path of the freshly built MCP server.
func mcpServerBin(t *testing.T) string {
	t.Helper()
	mcpServerOnce.Do(func() {
		bin := filepath.Join(runtimesDir(), "bin", "acpdrive-interop-mcpserver")
		if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
			mcpServerErr = err
			return
		}
		cmd := exec.Command("go", "build", "-o", bin, ".")
		cmd.Dir = filepath.Join(repoRoot(), "test", "mcpserver")
		if out, err := cmd.CombinedOutput(); err != nil {
			mcpServerErr = &buildFailure{err: err, out: string(out)}
			return
		}
		mcpServerPath = bin
	})
	if mcpServerErr != nil {
		t.Fatalf("build test/mcpserver: %v", mcpServerErr)
	}
	return mcpServerPath
}

type buildFailure struct {
	err error
	out string
}

func (e *buildFailure) Error() string { return e.err.Error() + "\n" + e.out }

// mcpRecord is one line of the MCP server's log (test/mcpserver Record).
type mcpRecord struct {
	Kind      string            `json:"kind"`
	Transport string            `json:"transport"`
	PID       int               `json:"pid"`
	Method    string            `json:"method"`
	Client    string            `json:"client"`
	Tool      string            `json:"tool"`
	Arguments json.RawMessage   `json:"arguments"`
	Path      string            `json:"path"`
	Headers   map[string]string `json:"headers"`
}

// readMCPLog reads the MCP server's log; a missing file is no records.
func readMCPLog(t *testing.T, path string) []mcpRecord {
	t.Helper()
	raw, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var out []mcpRecord
	for _, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r mcpRecord
		require.NoError(t, json.Unmarshal(line, &r), "%s", line)
		out = append(out, r)
	}
	return out
}

// mcpMethods lists the MCP methods the server received, in order.
func mcpMethods(recs []mcpRecord) []string {
	var out []string
	for _, r := range recs {
		if r.Kind == "method" {
			out = append(out, r.Method)
		}
	}
	return out
}

// mcpCalls lists the tool calls the server received as "tool args".
func mcpCalls(recs []mcpRecord) []string {
	var out []string
	for _, r := range recs {
		if r.Kind == "call" {
			out = append(out, r.Tool+" "+string(r.Arguments))
		}
	}
	return out
}

// httpMCPServer is the MCP server running in streamable-HTTP mode on
// 127.0.0.1.
type httpMCPServer struct {
	URL string
	Log string
}

// startHTTPMCPServer starts the MCP server in HTTP mode on a port of its
// own on 127.0.0.1, logging to dir/mcp-http.jsonl; the test's cleanup
// stops it (SIGTERM, then SIGKILL).
func startHTTPMCPServer(t *testing.T, dir string) *httpMCPServer {
	t.Helper()
	bin := mcpServerBin(t)
	s := &httpMCPServer{Log: filepath.Join(dir, "mcp-http.jsonl")}
	cmd := exec.Command(bin, "-transport", "http", "-addr", "127.0.0.1:0", "-log", s.Log)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	first := &firstLine{ch: make(chan string, 1)}
	var stderr eventrec.Log
	cmd.Stdout, cmd.Stderr = first, &stderr
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	select {
	case s.URL = <-first.ch:
	case <-done:
		t.Fatalf("the MCP server exited before printing its URL; stderr: %s", stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("the MCP server printed no URL; stderr: %s", stderr.String())
	}
	require.True(t, strings.HasPrefix(s.URL, "http://127.0.0.1:"), "MCP server URL %q; stderr: %s", s.URL, stderr.String())
	return s
}

// firstLine hands the first line written to it to ch.
type firstLine struct {
	mu   sync.Mutex
	buf  []byte
	sent bool
	ch   chan string
}

func (w *firstLine) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.sent {
		w.buf = append(w.buf, p...)
		if i := bytes.IndexByte(w.buf, '\n'); i >= 0 {
			w.sent = true
			w.ch <- strings.TrimSpace(string(w.buf[:i]))
		}
	}
	return len(p), nil
}

// sessionNewMCPServers decodes the mcpServers acpdrive sent on
// session/new, from the rig's wire log.
func sessionNewMCPServers(t *testing.T, r *rig) []map[string]any {
	t.Helper()
	for _, m := range r.wire.messages() {
		if m.Out && m.Method == "session/new" {
			var p struct {
				MCPServers []map[string]any `json:"mcpServers"`
			}
			require.NoError(t, json.Unmarshal(m.Params, &p))
			return p.MCPServers
		}
	}
	t.Fatal("acpdrive sent no session/new")
	return nil
}

// checkNoteCalled asserts a stdio MCP server's note tool round trip on a
// Chat Completions runtime: the server listed its tools and received the
// model's call with its arguments, the model was called twice, the second
// time with the tool's answer, and no request went unscripted. It returns
// the model calls for the runtime's own assertions.
func checkNoteCalled(t *testing.T, srv *fakes.Server, mcpLog string) []fakes.Request {
	t.Helper()
	recs := readMCPLog(t, mcpLog)
	assert.Contains(t, mcpMethods(recs), "tools/list")
	assert.Equal(t, []string{noteCall}, mcpCalls(recs), "the MCP server received the call with the model's arguments")
	calls := srv.ModelCalls()
	require.Len(t, calls, 2, srv.Describe())
	assert.True(t, calls[1].BodyContains(`noted: `+noteText), "the tool's answer reaches the model: %s", calls[1].Body)
	assert.Equal(t, 0, srv.Unscripted())
	return calls
}
