//go:build interop

package interop

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/acpdrive/acpdrive/adapters/netdial"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// Qwen Code 0.24.4 at a URL: `qwen serve --port 0 --no-web` in the rig's
// namespace, reached over Streamable HTTP and over its WebSocket at /acp
// (docs/behaviour.md#network), against the fake Chat Completions server.

// qwenServeRig is qwenRig's world with `qwen serve` for the command.
func qwenServeRig(t *testing.T) (*rig, *fakes.Server) {
	nodePath(t)
	r := newRig(t, locate(t, "qwen", "qwen/node_modules/.bin/qwen"), "serve", "--port", "0", "--no-web")
	r.offline()
	srv := r.serve(fakes.NewChat())
	writeFile(t, filepath.Join(r.home, ".qwen", "settings.json"), `{
  "privacy": {"usageStatisticsEnabled": false},
  "memory": {"enableManagedAutoMemory": false, "enableManagedAutoDream": false},
  "ui": {"enableFollowupSuggestions": false},
  "model": {"generationConfig": {"maxRetries": 0}}
}
`)
	r.setenv("OPENAI_BASE_URL", srv.URL()+"/v1")
	r.setenv("OPENAI_API_KEY", "fake-qwen-key")
	r.setenv("OPENAI_MODEL", qwenModel)
	r.setenv("QWEN_CODE_NO_RELAUNCH", "true")
	r.setenv("QWEN_USAGE_STATISTICS_ENABLED", "false")
	logEvidenceAtEnd(t, "qwen-serve", r)
	return r, srv
}

// listeningRe is qwen serve's line once it listens; wsReadyRe the line
// once its WebSocket (and its ACP bridge) is up, a moment later.
var (
	listeningRe = regexp.MustCompile(`listening on http://127\.0\.0\.1:([0-9]+)`)
	wsReadyRe   = regexp.MustCompile(`/acp WebSocket transport enabled`)
)

// startQwenServe starts the rig's `qwen serve` in its namespace and
// returns the address that reaches it from this side.
func startQwenServe(t *testing.T, r *rig) string {
	t.Helper()
	argv := append(append(append(r.ns.prefix(), "env", "-i"), r.envList()...), r.command...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = r.workspace
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = cmd.Stdout // one stream of lines: both are read for readiness
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			fmt.Fprintln(r.logs, "qwen serve:", sc.Text())
			select {
			case lines <- sc.Text():
			default:
			}
		}
	}()
	deadline := time.After(time.Minute)
	port := ""
	for {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "qwen serve ended before it was ready")
			if m := listeningRe.FindStringSubmatch(l); m != nil {
				port = m[1]
			}
			if port != "" && wsReadyRe.MatchString(l) {
				return r.ns.expose(t, "127.0.0.1:"+port)
			}
		case <-deadline:
			t.Fatal("qwen serve was not ready within a minute")
		}
	}
}

// expose relays a listener on this side's loopback, at the same address
// (a server that checks the Host header against its own port, as qwen
// serve does, sees its own), to addr inside the namespace (forward's
// reverse) and returns the address.
func (n *netNamespace) expose(t testing.TB, addr string) string {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err, "the port qwen serve took inside the namespace is taken on this side")
	n.mu.Lock()
	n.listeners = append(n.listeners, ln)
	n.mu.Unlock()
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := n.dialInside(addr)
			if err != nil {
				in.Close()
				continue
			}
			if !n.track(in, out) {
				return
			}
			n.wg.Add(2)
			go n.pipe(in, out)
			go n.pipe(out, in)
		}
	}()
	return ln.Addr().String()
}

// dialInside connects to addr from inside the namespace, on a thread
// moved in and back as forward's is.
func (n *netNamespace) dialInside(addr string) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		home, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: err}
			return
		}
		defer home.Close()
		f, err := os.Open(filepath.Join("/run/netns", n.name))
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: err}
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: err}
			return
		}
		c, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if unix.Setns(int(home.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		ch <- result{c: c, err: err}
	}()
	res := <-ch
	return res.c, res.err
}

// urlSession starts a library session on the runtime at url, its wire
// tapped as the rig's.
func urlSession(t *testing.T, r *rig, url string, opts ...optFn) *app.Session {
	t.Helper()
	o := r.options(opts...)
	l, err := netdial.New(netdial.Options{URL: url, Logger: o.Logger})
	require.NoError(t, err)
	o.Launcher = &tapLauncher{inner: l, wire: r.wire}
	o.Settings.Command = []string{url}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sess, err := app.Start(ctx, o)
	require.NoError(t, err)
	t.Cleanup(func() { stopURL(t, sess) })
	return sess
}

// stopURL stops a session at a URL (there is no local process group to
// check).
func stopURL(t *testing.T, sess *app.Session) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	assert.NoError(t, sess.Stop(ctx))
}

// defaultMode asks for mode default, as `qwen --acp --approval-mode
// default` runs: serve's sessions start in auto.
func defaultMode(o *app.Options) { o.Settings.Session.Mode = "default" }

// comparableShape leaves out of an event sequence what differs between
// `qwen --acp` on stdio and `qwen serve` by design or by the runtime: the
// capability-gap notice (a runtime at a URL gets no tool servers; serve's
// agentInfo has no version), the session-configuration notice (serve's
// sessions start in mode auto, so the row asks for default, which
// --approval-mode default gives on stdio), and the malformed-message
// notices of the runtime's own extension requests (on stdio Qwen asks
// craft/drainMidTurnQueue after a tool call; serve's bridge answers it
// itself).
func comparableShape(shape []string) []string {
	var out []string
	for _, e := range shape {
		if strings.HasPrefix(e, "notification:this session started with a declared capability gap") ||
			strings.HasPrefix(e, "notification:session configuration:") || strings.HasPrefix(e, "malformed:") {
			continue
		}
		out = append(out, e)
	}
	return out
}

// TestQwenServe: a turn with a tool call whose permission request the
// client's policy refuses, and a cancel, over Streamable HTTP and over
// the WebSocket of `qwen serve`, give the events and outcome of the same
// scenario over `qwen --acp`'s stdio.
func TestQwenServe(t *testing.T) {
	t.Parallel()
	script := func(srv *fakes.Server) {
		srv.Script(fakes.Reply{
			Text:  []string{"Let me write the file."},
			Tool:  &fakes.ToolCall{ID: "call_qwen_1", Name: "run_shell_command", Args: map[string]any{"command": "echo interop > out.txt", "description": "write out.txt"}},
			Usage: fakes.Usage{Input: 100, Output: 12},
		})
	}
	const prompt = "write interop into out.txt"
	stdio, srv := qwenRig(t, "--approval-mode", "default")
	script(srv)
	sess := stdio.mustStart()
	want := outcomeOf(stdio.turn(sess, prompt))
	stdio.stop(sess)
	wantShape := stdio.shape()
	require.Contains(t, wantShape, refused, "the stdio run asks for a permission")

	for _, scheme := range []string{"http", "ws"} {
		t.Run(scheme, func(t *testing.T) {
			t.Parallel()
			r, srv := qwenServeRig(t)
			script(srv)
			url := scheme + "://" + startQwenServe(t, r) + "/acp"
			sess := urlSession(t, r, url, defaultMode)
			res := r.turn(sess, prompt)
			stopURL(t, sess)
			assert.Equal(t, want, outcomeOf(res))
			assertShape(t, comparableShape(wantShape), comparableShape(r.shape()))
			assert.Contains(t, r.shape(), "notification:this session started with a declared capability gap in: tool servers, token counts, agent version",
				"a runtime at a URL gets no tool servers from here")
			assertNotWritten(t, r)
			perm, ok := r.wire.request("session/request_permission")
			require.True(t, ok, "the permission request reached the client")
			answer, ok := r.wire.answerTo(perm.ID)
			require.True(t, ok)
			assert.JSONEq(t, `{"outcome":{"outcome":"selected","optionId":"cancel"}}`, string(answer.Result), "the client's policy decided")
		})
		t.Run(scheme+"/cancel", func(t *testing.T) {
			t.Parallel()
			r, srv := qwenServeRig(t)
			hold := make(chan struct{})
			defer close(hold)
			srv.Script(fakes.Reply{Text: []string{"Working on it ", "(never sent)."}, Hold: hold, Usage: fakes.Usage{Input: 40, Output: 4}})
			url := scheme + "://" + startQwenServe(t, r) + "/acp"
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			sess := urlSession(t, r, url, defaultMode, func(o *app.Options) {
				o.OnAgentText = func(_, text string) {
					if regexp.MustCompile(`Working on it`).MatchString(text) {
						cancel()
					}
				}
			})
			tctx, tcancel := context.WithTimeout(ctx, 2*time.Minute)
			defer tcancel()
			res := sess.Turn(tctx, "start something long")
			stopURL(t, sess)
			assert.Equal(t, outcome{Outcome: "turn_cancelled", Kind: string(domain.KindTurnCancelled), Message: "turn cancelled"}, outcomeOf(res))
			assert.Contains(t, r.wire.methodsOut(), "session/cancel")
		})
	}
}
