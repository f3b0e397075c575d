package inprocess

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/refagent"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitFor bounds every wait of the tests.
const waitFor = 10 * time.Second

// agent is a started in-process agent with a line reader on its stdout.
type agent struct {
	t     *testing.T
	p     ports.Process
	lines chan string
	read  chan struct{} // closed when the reader returns
}

// startAgent prepares and starts an agent with args and reads its stdout.
// Cleanup tears it down in the application's order and checks that the
// reader returned.
func startAgent(t *testing.T, args ...string) *agent {
	t.Helper()
	plan, err := New(args...).Prepare(ports.LaunchRequest{Command: []string{"ignored"}, Workspace: t.TempDir()})
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	p, err := plan.Start(context.Background(), []string{"IGNORED=1"})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	a := &agent{t: t, p: p, lines: make(chan string, 256), read: make(chan struct{})}
	go func() {
		defer close(a.read)
		defer close(a.lines)
		br := bufio.NewReader(p.Stdout())
		for {
			line, err := br.ReadString('\n')
			if line != "" {
				a.lines <- strings.TrimSuffix(line, "\n")
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { a.teardown() })
	return a
}

// teardown runs the teardown steps: close stdin, terminate, kill, close
// stdout, release.
func (a *agent) teardown() {
	_ = a.p.Stdin().Close()
	_ = a.p.Terminate()
	if err := a.p.Kill(); err != nil {
		a.t.Errorf("Kill: %v", err)
	}
	_ = a.p.CloseStdout()
	go func() {
		for range a.lines {
		}
	}()
	if err := a.p.Release(); err != nil {
		a.t.Errorf("Release: %v", err)
	}
	select {
	case <-a.read:
	case <-time.After(waitFor):
		a.t.Error("stdout reader did not return")
	}
}

func (a *agent) send(line string) {
	a.t.Helper()
	if _, err := a.p.Stdin().Write([]byte(line + "\n")); err != nil {
		a.t.Fatalf("write %s: %v", line, err)
	}
}

func (a *agent) next() string {
	a.t.Helper()
	select {
	case line, ok := <-a.lines:
		if !ok {
			tail, _ := a.p.StderrTail()
			a.t.Fatalf("stdout ended; stderr: %s", tail)
		}
		return line
	case <-time.After(waitFor):
		a.t.Fatalf("no line within %v", waitFor)
	}
	return ""
}

func (a *agent) expect(want ...string) {
	a.t.Helper()
	for _, w := range want {
		if got := a.next(); got != w {
			a.t.Fatalf("line mismatch\n got: %s\nwant: %s", got, w)
		}
	}
}

// waitExit waits for the agent to end and returns its status.
func (a *agent) waitExit() domain.ExitStatus {
	a.t.Helper()
	select {
	case <-a.p.Exited():
		return a.p.Exit()
	case <-time.After(waitFor):
		a.t.Fatalf("agent did not exit within %v", waitFor)
	}
	return domain.ExitStatus{}
}

// running asserts that the agent is still running after d.
func (a *agent) running(d time.Duration) {
	a.t.Helper()
	select {
	case <-a.p.Exited():
		a.t.Fatalf("agent exited: %v", a.p.Exit())
	case <-time.After(d):
	}
}

func (a *agent) stderrContains(s string) {
	a.t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		tail, _ := a.p.StderrTail()
		if strings.Contains(string(tail), s) {
			return
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("stderr %q lacks %q", tail, s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

const (
	initReq  = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false},"clientInfo":{"name":"inproc-test","version":"1"}}}`
	initResp = `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":false,"promptCapabilities":{},"mcpCapabilities":{"http":false,"sse":false}},"agentInfo":{"name":"acpdrive-reference-agent","title":"acpdrive reference agent","version":"0.1.0"},"authMethods":[]}}`
	newResp  = `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"ref-1"}}`
)

func newReq(cwd string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"` + cwd + `","mcpServers":[]}}`
}

func promptReq(id, text string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"session/prompt","params":{"sessionId":"ref-1","prompt":[{"type":"text","text":"` + text + `"}]}}`
}

func chunkLine(messageID, text string) string {
	return `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"ref-1","update":{"sessionUpdate":"agent_message_chunk","messageId":"` + messageID + `","content":{"type":"text","text":"` + text + `"}}}}`
}

// openSession initializes the agent and opens session ref-1.
func (a *agent) openSession() {
	a.t.Helper()
	a.send(initReq)
	a.expect(initResp)
	a.send(newReq(a.t.TempDir()))
	a.expect(newResp)
}

func TestExchange(t *testing.T) {
	a := startAgent(t)
	if id := a.p.Identity(); id != (ports.Identity{}) {
		t.Fatalf("Identity = %+v, want the zero Identity (PID 0)", id)
	}
	a.openSession()
	a.send(promptReq("2", "hello, reference agent!"))
	a.expect(
		chunkLine("m-1", "hello, reference"),
		chunkLine("m-1", " agent!"),
		`{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}`,
	)
	if err := a.p.Stdin().Close(); err != nil {
		t.Fatalf("close stdin: %v", err)
	}
	if got, want := a.waitExit(), (domain.ExitStatus{Exited: true, Code: 0}); got != want {
		t.Fatalf("Exit = %+v, want %+v", got, want)
	}
	// Stdout reaches its end once the agent has exited.
	for range a.lines {
	}
}

func TestStdinHasWriteDeadline(t *testing.T) {
	a := startAgent(t)
	d, ok := a.p.Stdin().(interface{ SetWriteDeadline(time.Time) error })
	if !ok {
		t.Fatal("Stdin has no SetWriteDeadline")
	}
	if err := d.SetWriteDeadline(time.Now().Add(-time.Second)); err != nil {
		t.Fatalf("SetWriteDeadline: %v", err)
	}
	if _, err := a.p.Stdin().Write([]byte("\n")); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("write past the deadline: %v, want ErrDeadlineExceeded", err)
	}
}

func TestTerminate(t *testing.T) {
	a := startAgent(t)
	a.openSession()
	if err := a.p.Terminate(); err != nil {
		t.Fatalf("Terminate: %v", err)
	}
	if got, want := a.waitExit(), (domain.ExitStatus{Exited: true, Code: 143}); got != want {
		t.Fatalf("Exit = %+v, want %+v", got, want)
	}
	// Terminating an ended agent is not an error.
	if err := a.p.Terminate(); err != nil {
		t.Fatalf("second Terminate: %v", err)
	}
}

func TestKillStubborn(t *testing.T) {
	a := startAgent(t, "--scenario", "stubborn")
	a.openSession()
	if err := a.p.Terminate(); err != nil {
		t.Fatalf("Terminate: %v", err)
	}
	a.stderrContains("ignoring SIGTERM")
	_ = a.p.Stdin().Close()
	a.running(100 * time.Millisecond)
	// Kill returns and the agent is gone, whatever it ignores; how soon
	// is not asserted (a loaded machine is slow).
	if err := a.p.Kill(); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	if got, want := a.waitExit(), (domain.ExitStatus{Exited: true, Code: -1, Signal: "killed"}); got != want {
		t.Fatalf("Exit = %+v, want %+v", got, want)
	}
	if got := a.p.Exit().String(); got != "signal: killed" {
		t.Fatalf("Exit().String() = %q", got)
	}
}

// TestKillBlockedWriter kills an agent blocked writing a line nobody reads.
func TestKillBlockedWriter(t *testing.T) {
	plan, err := New("--scenario", "stubborn").Prepare(ports.LaunchRequest{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Start(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	// Nobody reads stdout: the 10 MiB line fills the pipe and blocks.
	for _, line := range []string{initReq, newReq(t.TempDir()), promptReq("2", "#huge-line")} {
		if _, err := p.Stdin().Write([]byte(line + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(50 * time.Millisecond)
	if err := p.Kill(); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	if err := p.Release(); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if got := p.Exit(); got.Signal != "killed" {
		t.Fatalf("Exit = %+v, want killed", got)
	}
}

func TestReleaseEndsARunningAgent(t *testing.T) {
	plan, err := New("--scenario", "stubborn").Prepare(ports.LaunchRequest{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Start(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	err = p.Release()
	if err == nil || !strings.Contains(err.Error(), "had not exited") {
		t.Fatalf("Release = %v, want an error saying the agent had not exited", err)
	}
	<-p.Exited()
	if again := p.Release(); again == nil || again.Error() != err.Error() {
		t.Fatalf("second Release = %v, want the first result", again)
	}
}

func TestScriptedExitAndStderrTail(t *testing.T) {
	a := startAgent(t, "--scenario", "crash")
	a.openSession()
	a.send(promptReq("2", "go"))
	if got, want := a.waitExit(), (domain.ExitStatus{Exited: true, Code: 3}); got != want {
		t.Fatalf("Exit = %+v, want %+v", got, want)
	}
	tail, truncated := a.p.StderrTail()
	if !strings.Contains(string(tail), "crashed on purpose") || truncated {
		t.Fatalf("StderrTail = %q, %v", tail, truncated)
	}
}

func TestSpawnRefused(t *testing.T) {
	a := startAgent(t, "--scenario", "orphan-stdout")
	if got, want := a.waitExit(), (domain.ExitStatus{Exited: true, Code: 2}); got != want {
		t.Fatalf("Exit = %+v, want %+v", got, want)
	}
	a.stderrContains("not supported in-process")
}

func TestLogAndCloseScenario(t *testing.T) {
	log := filepath.Join(t.TempDir(), "agent.log")
	a := startAgent(t, "--scenario", "close", "--log", log)
	a.send(initReq)
	a.next()
	a.send(newReq(a.t.TempDir()))
	a.expect(newResp)
	a.send(`{"jsonrpc":"2.0","id":2,"method":"session/close","params":{"sessionId":"ref-1"}}`)
	a.expect(`{"jsonrpc":"2.0","id":2,"result":{}}`)
	if got, want := a.waitExit(), (domain.ExitStatus{Exited: true, Code: 0}); got != want {
		t.Fatalf("Exit = %+v, want %+v", got, want)
	}
	recs, err := refagent.ReadLog(log)
	if err != nil {
		t.Fatal(err)
	}
	var methods []string
	for _, r := range recs {
		methods = append(methods, r.Method)
	}
	if got := strings.Join(methods, ","); got != "initialize,session/new,session/close" {
		t.Fatalf("logged methods %s", got)
	}
}

func TestPlanStartsTwice(t *testing.T) {
	plan, err := New().Prepare(ports.LaunchRequest{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Target().Remote() {
		t.Fatal("in-process target is remote")
	}
	for i := 0; i < 2; i++ {
		p, err := plan.Start(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		_ = p.Stdin().Close()
		<-p.Exited()
		if got := p.Exit(); got != (domain.ExitStatus{Exited: true, Code: 0}) {
			t.Fatalf("start %d: Exit = %+v", i, got)
		}
		if err := p.Release(); err != nil {
			t.Fatalf("start %d: Release: %v", i, err)
		}
	}
}

func TestStartCancelled(t *testing.T) {
	plan, err := New().Prepare(ports.LaunchRequest{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p, err := plan.Start(ctx, nil)
	var ae *domain.AgentError
	if p != nil || !errors.As(err, &ae) || ae.Kind != domain.KindTurnCancelled {
		t.Fatalf("Start = %v, %v; want a turn_cancelled AgentError", p, err)
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v does not wrap context.Canceled", err)
	}
}

func TestPrepareValidatesWorkspace(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, workspace, msg string
	}{
		{"empty", "", domain.MsgEmptyWorkspace},
		{"relative", "some/dir", domain.MsgWorkspaceNotAbsolute},
		{"not UTF-8", filepath.Join(dir, "w\xff"), domain.MsgWorkspaceNotUTF8},
		{"missing", filepath.Join(dir, "missing"), domain.MsgWorkspaceMissing},
		{"file", file, domain.MsgWorkspaceNotDir},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plan, err := New().Prepare(ports.LaunchRequest{Command: []string{"whatever"}, Workspace: c.workspace})
			var ae *domain.AgentError
			if plan != nil || !errors.As(err, &ae) {
				t.Fatalf("Prepare = %v, %v; want an AgentError", plan, err)
			}
			if ae.Kind != domain.KindInvalidWorkspaceCWD || ae.Message != c.msg {
				t.Fatalf("error %s %q, want %s %q", ae.Kind, ae.Message, domain.KindInvalidWorkspaceCWD, c.msg)
			}
		})
	}
}

// TestPrepareRefusesASandbox: an in-process agent cannot be confined, so
// a request for a sandbox is refused, never served unconfined
// (docs/behaviour.md#sandbox).
func TestPrepareRefusesASandbox(t *testing.T) {
	_, err := New().Prepare(ports.LaunchRequest{Workspace: t.TempDir(), Sandbox: domain.Sandbox{Enabled: true}})
	var ae *domain.AgentError
	if !errors.As(err, &ae) || ae.Kind != domain.KindAgentNotFound || ae.Message != MsgNoSandbox {
		t.Fatalf("Prepare: %v, want agent_not_found %q", err, MsgNoSandbox)
	}
}
