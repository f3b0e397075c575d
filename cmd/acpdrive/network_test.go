//go:build linux

package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/internal/testsupport/proctest"
	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
)

// serveAt starts "acpdrive serve --listen listen -- acpdrive agent
// agentArgs..." with env added and returns the URL its first line
// prints. The server is ended (SIGTERM, then waited for) at the test's
// end.
func serveAt(t *testing.T, listen string, env []string, serveArgs []string, agentArgs ...string) string {
	t.Helper()
	url, _ := servePID(t, listen, env, serveArgs, agentArgs...)
	return url
}

// servePID is serveAt, also returning serve's process id.
func servePID(t *testing.T, listen string, env []string, serveArgs []string, agentArgs ...string) (string, int) {
	t.Helper()
	bin := testbin.Path(t)
	args := append([]string{"serve", "--listen", listen}, serveArgs...)
	args = append(append(args, "--", bin, "agent"), agentArgs...)
	cmd := exec.Command(bin, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("serve's stderr:\n%s", stderr.String())
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Wait()
		require.NoError(t, err, "serve printed no URL; stderr: %s", stderr.String())
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	return strings.TrimSpace(line), cmd.Process.Pid
}

// lockedBuffer is a process's output, read while the process may still
// write it.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// transport is one way a client dials through acpdrive serve: where
// serve listens, and the scheme the client puts on the URL serve prints
// ("" keeps it).
type transport struct{ listen, scheme string }

// dial is the URL a client dials for the URL serve printed.
func (tr transport) dial(url string) string {
	if tr.scheme == "" {
		return url
	}
	_, rest, _ := strings.Cut(url, "://")
	return tr.scheme + "://" + rest
}

// transports are the transports of docs/behaviour.md#network.
func transports(t *testing.T) map[string]transport {
	return map[string]transport{
		"tcp":  {listen: "tcp://127.0.0.1:0"},
		"unix": {listen: "unix:" + filepath.Join(shortDir(t), "acp.sock")},
		"ws":   {listen: "http://127.0.0.1:0", scheme: "ws"},
		"http": {listen: "http://127.0.0.1:0"},
	}
}

// shortDir is a directory with a path short enough for a unix socket.
func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "nt")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// comparable is a JSON line without what differs between a local and a
// network launch by design: times (a tool call's measured duration among them), the process id, the host and what a
// remote launch never has (measurement, tool servers).
func comparable(t *testing.T, out string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), sc.Text())
		for _, k := range []string{"time", "agent_pid", "host", "capability_gaps", "duration_ms", "elapsed_ms", "tool_duration_ms"} {
			delete(m, k)
		}
		if msg, _ := m["message"].(string); strings.HasPrefix(msg, "this session started with a declared capability gap") {
			continue // a remote launch delivers no tool servers, by design
		}
		lines = append(lines, m)
	}
	return lines
}

// TestNetworkRunMatchesStdio: a run through acpdrive serve over each
// transport gives the events, results and exit status a stdio run of the
// same scenario gives: tool calls, a permission request the client's
// policy decides, and the session closed through the protocol
// (docs/behaviour.md#network).
func TestNetworkRunMatchesStdio(t *testing.T) {
	bin := testbin.Path(t)
	prompts := []string{"#tools", "#permission-refusable", "hello"}
	local := func(log string) []string {
		return append([]string{"run", "--json", "--permissions", "edit", "--command", bin + " agent --scenario close --log " + log}, prompts...)
	}
	stdioLog := filepath.Join(t.TempDir(), "stdio.log")
	want, _, wantCode := runIn(t, t.TempDir(), local(stdioLog)...)
	require.Equal(t, 0, wantCode, want)
	require.Contains(t, want, `"permission_decision"`, "the scenario asks for a permission")
	for name, tr := range transports(t) {
		t.Run(name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "agent.log")
			url := tr.dial(serveAt(t, tr.listen, nil, nil, "--scenario", "close", "--log", log))
			args := append([]string{"run", "--json", "--permissions", "edit", "--url", url}, prompts...)
			got, stderr, code := runIn(t, t.TempDir(), args...)
			assert.Equal(t, wantCode, code, stderr)
			assert.Equal(t, comparable(t, want), comparable(t, got))
			// The permission request was answered by this client's policy,
			// and the session was closed through the protocol.
			received := readFile(t, log)
			assert.Contains(t, received, `"answers":"session/request_permission","message":{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"reject-once"}}}`)
			assert.Contains(t, received, `"method":"session/close"`)
		})
	}
}

// readFile waits (bounded) for path to exist and returns its text.
func readFile(t *testing.T, path string) string {
	t.Helper()
	var b []byte
	require.Eventually(t, func() bool {
		var err error
		b, err = os.ReadFile(path)
		return err == nil && strings.Contains(string(b), "session/close")
	}, 5*time.Second, 20*time.Millisecond, "the agent's log %s", path)
	return string(b)
}

// TestNetworkRunCancel: SIGINT during a turn over the network cancels it
// (session/cancel reaches the runtime; the turn ends turn_cancelled, exit
// 1), as over stdio.
func TestNetworkRunCancel(t *testing.T) {
	for name, tr := range transports(t) {
		t.Run(name, func(t *testing.T) {
			url := tr.dial(serveAt(t, tr.listen, nil, nil, "--scenario", "close"))
			lines, code := runUntilChunk(t, func(c *exec.Cmd) { require.NoError(t, c.Process.Signal(syscall.SIGINT)) },
				"run", "--json", "--url", url, "#wait-cancel")
			assert.Equal(t, 1, code)
			results := ofType(lines, "turn_result")
			require.Len(t, results, 1)
			assert.Equal(t, "turn_cancelled", results[0].Outcome)
			assert.Equal(t, "run_result", lines[len(lines)-1].Type)
		})
	}
}

// runUntilChunk runs the CLI and, at the first message chunk, calls at
// and returns the JSON lines and the exit status. A run that outlives the
// test's safety bound is killed, so a hang fails instead of stalling the
// suite.
func runUntilChunk(t *testing.T, at func(*exec.Cmd), args ...string) ([]line, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testbin.Path(t), args...)
	cmd.Dir = t.TempDir()
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(stdout)
	var lines []line
	done := false
	for sc.Scan() {
		var l line
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l), sc.Text())
		lines = append(lines, l)
		if !done && l.Type == "message_chunk" {
			done = true
			at(cmd)
		}
	}
	_ = cmd.Wait()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("run's stderr:\n%s", stderr.String())
		}
	})
	require.True(t, done, "no chunk came; stderr: %s", stderr.String())
	return lines, cmd.ProcessState.ExitCode()
}

// cutProxy forwards tcp connections to target until cut closes every
// link, as a network that drops the connection.
type cutProxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &cutProxy{ln: ln}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			p.wg.Add(2)
			go func() { defer p.wg.Done(); _, _ = io.Copy(u, c) }()
			go func() { defer p.wg.Done(); _, _ = io.Copy(c, u) }()
		}
	}()
	t.Cleanup(func() { _ = ln.Close(); p.cut(); p.wg.Wait() })
	return p
}

// cut closes every link at once.
func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		_ = c.Close()
	}
}

// TestNetworkCutMidTurn: a connection cut during a turn ends the turn
// with port_exit and the documented message, never a hang, where the
// transport cannot resume (tcp); over Streamable HTTP the event stream
// is reopened with Last-Event-ID, over WebSocket the connection resumed
// by stream/resume, and the turn goes on: a cancel sent after the cut
// still ends it turn_cancelled (docs/behaviour.md#network).
func TestNetworkCutMidTurn(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tr     transport
		resume bool
	}{
		{"tcp", transport{listen: "tcp://127.0.0.1:0"}, false},
		{"ws", transport{listen: "http://127.0.0.1:0", scheme: "ws"}, true},
		{"http", transport{listen: "http://127.0.0.1:0"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			marker := "cut-" + tc.name + "-" + strconv.Itoa(os.Getpid())
			served, pid := servePID(t, tc.tr.listen, nil, nil, "--agent-name", marker)
			url := tc.tr.dial(served)
			scheme, rest, _ := strings.Cut(url, "://")
			host, path, _ := strings.Cut(rest, "/")
			p := newCutProxy(t, host)
			via := scheme + "://" + p.ln.Addr().String()
			if path != "" {
				via += "/" + path
			}
			lines, code := runUntilChunk(t, func(c *exec.Cmd) {
				assert.Greater(t, len(proctest.WithCmdline(marker)), 1, "serve and the runtime it serves")
				p.cut()
				if tc.resume {
					require.NoError(t, c.Process.Signal(syscall.SIGINT))
				}
			}, "run", "--json", "--url", via, "#wait-cancel")
			results := ofType(lines, "turn_result")
			require.Len(t, results, 1)
			if tc.resume {
				assert.Equal(t, "turn_cancelled", results[0].Outcome)
				assert.Equal(t, 1, code)
			} else {
				assert.Equal(t, "port_exit", results[0].ErrorKind)
				assert.Equal(t, "the agent's connection ended before a response arrived", results[0].Message)
				assert.NotEqual(t, 0, code)
			}
			assert.Equal(t, "run_result", lines[len(lines)-1].Type)
			// The runtime behind the cut connection is ended by serve:
			// only serve's own command line still names the marker.
			assert.Eventually(t, func() bool { return slices.Equal(proctest.WithCmdline(marker), []int{pid}) },
				10*time.Second, 20*time.Millisecond, "the served runtime is gone")
		})
	}
}

// runCut runs the CLI through p and cuts every link at the first
// message chunk; it returns the standard output and the exit status. A
// run that outlives the test's safety bound is killed, so a hang fails
// instead of stalling the suite.
func runCut(t *testing.T, p *cutProxy, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testbin.Path(t), args...)
	cmd.Dir = t.TempDir()
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var out strings.Builder
	cut := false
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
		var l line
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l), sc.Text())
		if !cut && l.Type == "message_chunk" {
			cut = true
			p.cut()
		}
	}
	_ = cmd.Wait()
	require.True(t, cut, "no chunk came; stderr: %s", stderr.String())
	return out.String(), cmd.ProcessState.ExitCode()
}

// TestNetworkResumeMatchesStdio: over WebSocket, a connection cut
// during a burst of updates is resumed after the last cursor received:
// the run gives exactly the events, results and exit status of an uncut
// stdio run (nothing lost, nothing twice), including a later turn whose
// permission answer travels on the new socket. Where the server no
// longer holds the connection (serve --hold shorter than the client's
// first resume), the turn ends port_exit with the documented message
// (docs/behaviour.md#network).
func TestNetworkResumeMatchesStdio(t *testing.T) {
	bin := testbin.Path(t)
	prompts := []string{"#burst 2000", "#permission-refusable", "hello"}
	want, _, wantCode := runIn(t, t.TempDir(), append([]string{"run", "--json", "--permissions", "edit",
		"--command", bin + " agent --scenario close"}, prompts...)...)
	require.Equal(t, 0, wantCode, want)
	via := func(t *testing.T, serveArgs ...string) (*cutProxy, string) {
		served := serveAt(t, "http://127.0.0.1:0", nil, serveArgs, "--scenario", "close")
		host, path, _ := strings.Cut(strings.TrimPrefix(served, "http://"), "/")
		p := newCutProxy(t, host)
		return p, "ws://" + p.ln.Addr().String() + "/" + path
	}

	t.Run("resumed", func(t *testing.T) {
		p, url := via(t)
		got, code := runCut(t, p, append([]string{"run", "--json", "--permissions", "edit", "--url", url}, prompts...)...)
		assert.Equal(t, wantCode, code)
		assert.Equal(t, comparable(t, want), comparable(t, got))
	})
	t.Run("no longer held", func(t *testing.T) {
		p, url := via(t, "--hold", "1ms")
		got, code := runCut(t, p, "run", "--json", "--url", url, "#wait-cancel")
		var results []line
		for _, l := range strings.Split(strings.TrimSpace(got), "\n") {
			var x line
			require.NoError(t, json.Unmarshal([]byte(l), &x))
			if x.Type == "turn_result" {
				results = append(results, x)
			}
		}
		require.Len(t, results, 1, got)
		assert.Equal(t, "port_exit", results[0].ErrorKind)
		assert.Equal(t, "the agent's connection ended before a response arrived", results[0].Message)
		assert.NotEqual(t, 0, code)
		assert.Contains(t, got, "the server could not resume the connection: the connection is no longer held")
	})
	// The fallback after a refused resume: with a retry, the session is
	// continued on a new connection by session/resume (the runtime
	// advertises it), its history kept, and the turn runs again there.
	t.Run("refused, then loaded by a retry", func(t *testing.T) {
		// The turn says a word, then works for seconds: the cut comes
		// while it runs (the test cuts at the first chunk).
		script := filepath.Join(t.TempDir(), "slow.json")
		require.NoError(t, os.WriteFile(script, []byte(`{"name":"slow","initialize":{"agentCapabilities":{"sessionCapabilities":{"resume":{}}}},
			"turns":{"slow":{"steps":[{"step":"text","text":"working","messageId":"m-1"},{"step":"sleep","ms":4000},{"step":"stop","stopReason":"end_turn"}]}}}`), 0o600))
		served := serveAt(t, "http://127.0.0.1:0", nil, []string{"--hold", "1ms"}, "--script", script)
		host, path, _ := strings.Cut(strings.TrimPrefix(served, "http://"), "/")
		p := newCutProxy(t, host)
		got, code := runCut(t, p, "run", "--json", "--retries", "1", "--url", "ws://"+p.ln.Addr().String()+"/"+path, "#slow")
		var replaced, result map[string]any
		for _, l := range strings.Split(strings.TrimSpace(got), "\n") {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(l), &m), l)
			switch m["type"] {
			case "retry_replaced":
				replaced = m
			case "turn_result":
				result = m
			}
		}
		require.NotNil(t, replaced, got)
		assert.Equal(t, true, replaced["resumed"], "the session was resumed on the new connection: %v", replaced)
		require.NotNil(t, result, got)
		assert.Equal(t, "turn_completed", result["outcome"], got)
		assert.Equal(t, 0, code)
	})
}

// TestNetworkToken: a token that is missing, unset or refused ends the
// start with exit 3 and one line naming the variable (or saying none was
// given); the right one is let in.
func TestNetworkToken(t *testing.T) {
	env := []string{"SERVE_TOKEN=s3cret"}
	for name, tr := range map[string]transport{
		"tcp":  {listen: "tcp://127.0.0.1:0"},
		"ws":   {listen: "http://127.0.0.1:0", scheme: "ws"},
		"http": {listen: "http://127.0.0.1:0"},
	} {
		url := tr.dial(serveAt(t, tr.listen, env, []string{"--token-env", "SERVE_TOKEN"}))
		t.Run(name, func(t *testing.T) {
			for _, tc := range []struct {
				name string
				env  []string
				args []string
				want string
			}{
				{"none given", nil, nil, "none was given"},
				{"unset", nil, []string{"--token-env", "NET_TEST_UNSET"}, "NET_TEST_UNSET"},
				{"refused", []string{"NET_TEST_TOKEN=wrong"}, []string{"--token-env", "NET_TEST_TOKEN"}, "refused the bearer token held in NET_TEST_TOKEN"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					cmd := exec.Command(testbin.Path(t), append(append([]string{"run", "--url", url}, tc.args...), "hello")...)
					cmd.Dir = t.TempDir()
					cmd.Env = append(os.Environ(), tc.env...)
					var stdout, stderr strings.Builder
					cmd.Stdout, cmd.Stderr = &stdout, &stderr
					_ = cmd.Run()
					assert.Equal(t, 3, cmd.ProcessState.ExitCode())
					assert.Equal(t, 1, strings.Count(strings.TrimSpace(stderr.String()), "\n")+1, "one line: %q", stderr.String())
					assert.Contains(t, stderr.String(), tc.want)
					assert.NotContains(t, stderr.String()+stdout.String(), "wrong", "the token is never printed")
				})
			}
			cmd := exec.Command(testbin.Path(t), "run", "--url", url, "--token-env", "NET_TEST_TOKEN", "hello")
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(), "NET_TEST_TOKEN=s3cret")
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, string(out))
			assert.NotContains(t, string(out), "s3cret")
		})
	}
}

// TestServeRefusesNonLoopbackWithoutToken: exit 2 and why, before
// anything listens.
func TestServeRefusesNonLoopbackWithoutToken(t *testing.T) {
	for _, listen := range []string{"tcp://0.0.0.0:0", "http://0.0.0.0:0"} {
		stdout, stderr, code := runIn(t, t.TempDir(), "serve", "--listen", listen, "--", "true")
		assert.Equal(t, 2, code)
		assert.Empty(t, stdout, "nothing listens, so no URL")
		assert.Contains(t, stderr, "not loopback needs a bearer token")
	}
}

// TestServeUnixSocketOwnerOnly: the socket is created 0600.
func TestServeUnixSocketOwnerOnly(t *testing.T) {
	path := filepath.Join(shortDir(t), "acp.sock")
	url := serveAt(t, "unix:"+path, nil, nil)
	assert.Equal(t, "unix:"+path, url)
	info, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
}

// TestValidateAgentURL: validate reads agent.url as the dialer does and
// refuses it beside a command.
func TestValidateAgentURL(t *testing.T) {
	for _, tc := range []struct{ agent, want string }{
		{"  url: ws://127.0.0.1:9/acp\n", ""},
		{"  url: http://127.0.0.1:9/acp\n", ""},
		{"  url: ftp://127.0.0.1:9/acp\n", "error agent.url.invalid: agent.url: address"},
		{"  url: tcp://127.0.0.1:9\n  command: runtime\n", "error agent.url.exclusive: "},
	} {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "WORKFLOW.md"), []byte("---\nagent:\n"+tc.agent+"---\n"), 0o600))
		stdout, _, code := runIn(t, dir, "validate")
		if tc.want == "" {
			assert.Equal(t, 0, code, stdout)
			assert.Empty(t, stdout)
			continue
		}
		assert.Equal(t, 1, code)
		assert.True(t, strings.HasPrefix(stdout, tc.want), stdout)
	}
}

// TestNetworkProbeAndRefusals: probe reaches a runtime at a URL; --url
// beside --command is refused before anything is dialled (exit 2), and
// so is a scheme the dialer does not take.
func TestNetworkProbeAndRefusals(t *testing.T) {
	url := serveAt(t, "tcp://127.0.0.1:0", nil, nil, "--scenario", "full-caps")
	stdout, stderr, code := runIn(t, t.TempDir(), "probe", "--json", "--url", url)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, `"acpdrive-reference-agent"`)

	_, stderr, code = runIn(t, t.TempDir(), "run", "--url", url, "--command", "runtime", "hello")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "--url and --command are exclusive")

	_, stderr, code = runIn(t, t.TempDir(), "run", "--url", "ftp://127.0.0.1:1/acp", "hello")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `scheme "ftp" is not one of`)
}

// TestServeSIGTERMEndsEveryConnection: serve's SIGTERM during a turn
// ends the runtime it served and the link; the client's turn ends
// port_exit, never a hang.
func TestServeSIGTERMEndsEveryConnection(t *testing.T) {
	marker := "sigterm-" + strconv.Itoa(os.Getpid())
	url, pid := servePID(t, "tcp://127.0.0.1:0", nil, nil, "--agent-name", marker)
	lines, _ := runUntilChunk(t, func(*exec.Cmd) {
		p, err := os.FindProcess(pid)
		require.NoError(t, err)
		require.NoError(t, p.Signal(syscall.SIGTERM))
	}, "run", "--json", "--url", url, "#wait-cancel")
	results := ofType(lines, "turn_result")
	require.Len(t, results, 1)
	assert.Equal(t, "port_exit", results[0].ErrorKind)
	proctest.WaitCmdlineGone(t, marker, 10*time.Second)
}
