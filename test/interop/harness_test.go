//go:build interop

package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/localexec"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/proctest"
	"github.com/acpdrive/acpdrive/internal/testbin"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// installScript installs every runtime the suite drives.
const installScript = "scripts/install-runtimes.sh"

// repoRoot is the root of the acpdrive module.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// runtimesDir is where scripts/install-runtimes.sh installs the runtimes.
func runtimesDir() string { return filepath.Join(repoRoot(), ".cache", "runtimes") }

// locate returns the absolute path of an installed runtime file, rel to
// .cache/runtimes/. A missing runtime fails the test in CI and skips it
// elsewhere, naming the install command.
func locate(t *testing.T, name, rel string) string {
	t.Helper()
	p := filepath.Join(runtimesDir(), rel)
	if _, err := os.Stat(p); err != nil {
		install := installScript + " " + name
		if os.Getenv("CI") != "" {
			t.Fatalf("runtime %s is not installed (%v): CI installs it with `%s` before `make interop`", name, err, install)
		}
		t.Skipf("runtime %s is not installed; install it with: %s", name, install)
	}
	return p
}

// nodePath returns the node executable every npm runtime runs on.
func nodePath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node is not on PATH: %v", err)
		}
		t.Skip("node is not on PATH")
	}
	return p
}

// rig is one test's world: a fresh HOME, workspace and TMPDIR, the exact
// environment the runtime gets (nothing of this machine's environment
// leaks through but PATH), and the recorders of what happened.
type rig struct {
	t         *testing.T
	root      string // per-test directory holding everything below
	home      string
	workspace string
	tmp       string
	env       map[string]string
	command   []string

	rec  *recorder
	logs *logBuffer
	wire *wireLog

	readTimeout time.Duration
	stopGrace   time.Duration
	servers     []*fakes.Server
}

func newRig(t *testing.T, command ...string) *rig {
	t.Helper()
	root := t.TempDir()
	r := &rig{
		t:           t,
		root:        root,
		home:        filepath.Join(root, "home"),
		workspace:   filepath.Join(root, "workspace"),
		tmp:         filepath.Join(root, "tmp"),
		command:     command,
		rec:         &recorder{},
		logs:        &logBuffer{},
		wire:        &wireLog{},
		readTimeout: 30 * time.Second,
		stopGrace:   5 * time.Second,
	}
	for _, d := range []string{r.home, r.workspace, r.tmp} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	r.env = map[string]string{
		"PATH":   os.Getenv("PATH"),
		"HOME":   r.home,
		"TMPDIR": r.tmp,
		"LANG":   "C.UTF-8",
		"TERM":   "dumb",
		"USER":   "acpdrive-interop",
	}
	t.Cleanup(func() {
		if t.Failed() {
			r.dump()
		}
	})
	return r
}

// serve registers a fake server whose requests are dumped on failure.
func (r *rig) serve(s *fakes.Server) *fakes.Server {
	r.servers = append(r.servers, s)
	r.t.Cleanup(s.Close)
	return s
}

// setenv sets a variable of the runtime's environment ("" value kept).
func (r *rig) setenv(k, v string) { r.env[k] = v }

// envList is the runtime's environment, sorted.
func (r *rig) envList() []string {
	out := make([]string, 0, len(r.env))
	for k, v := range r.env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

func (r *rig) dump() {
	r.t.Logf("acpdrive log:\n%s", r.logs.String())
	r.t.Logf("wire:\n%s", r.wire.String())
	r.t.Logf("events:\n%s", strings.Join(r.rec.shape(r.normalize), "\n"))
	for _, s := range r.servers {
		r.t.Logf("fake server requests:\n%s", s.Describe())
	}
}

// normalize replaces the test's own paths in an event message.
func (r *rig) normalize(s string) string {
	s = strings.ReplaceAll(s, r.workspace, "<ws>")
	s = strings.ReplaceAll(s, r.home, "<home>")
	return strings.ReplaceAll(s, r.root, "<root>")
}

type optFn func(*app.Options)

// options are the app.Options of a library session on this rig. The
// runtime starts through `env -i` with exactly the rig's environment.
func (r *rig) options(opts ...optFn) app.Options {
	cfg := domain.DefaultConfig()
	cfg.Command = append(append([]string{"env", "-i"}, r.envList()...), r.command...)
	cfg.ReadTimeout = r.readTimeout
	cfg.StopGrace = r.stopGrace
	cfg.StallTimeout = 0
	cfg.TurnTimeout = 3 * time.Minute
	logger := slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	o := app.Options{
		Config:    cfg,
		Workspace: r.workspace,
		Launcher:  &tapLauncher{inner: localexec.New(localexec.Options{Logger: logger}), wire: r.wire},
		Logger:    logger,
		OnEvent:   r.rec.add,
	}
	for _, f := range opts {
		f(&o)
	}
	return o
}

// start starts a library session; the caller stops it with stop.
func (r *rig) start(opts ...optFn) (*app.Session, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return app.Start(ctx, r.options(opts...))
}

// mustStart starts a library session and registers a cleanup that stops
// it (stop is idempotent) and checks no process of its group survives.
func (r *rig) mustStart(opts ...optFn) *app.Session {
	r.t.Helper()
	sess, err := r.start(opts...)
	require.NoError(r.t, err)
	r.t.Cleanup(func() { r.stop(sess) })
	return sess
}

// stop tears the session down and checks that its whole process group is
// gone.
func (r *rig) stop(sess *app.Session) time.Duration {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	t0 := time.Now()
	require.NoError(r.t, sess.Stop(ctx))
	took := time.Since(t0)
	proctest.WaitGroupEmpty(r.t, sess.PID(), 3*time.Second)
	return took
}

// turn runs one turn bounded at two minutes.
func (r *rig) turn(sess *app.Session, prompt string) domain.TurnResult {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return sess.Turn(ctx, prompt)
}

// shape is the rig's normalized event sequence.
func (r *rig) shape() []string { return r.rec.shape(r.normalize) }

// outcome is a turn result reduced to what the tests assert.
type outcome struct {
	Outcome    string
	Kind       string
	Message    string
	StopReason string
}

func outcomeOf(res domain.TurnResult) outcome {
	o := outcome{Outcome: string(res.Outcome), StopReason: res.StopReason}
	if res.Err != nil {
		o.Kind, o.Message = string(res.Err.Kind), res.Err.Message
	}
	return o
}

// completed is the outcome of a turn that ended with end_turn.
var completed = outcome{Outcome: "turn_completed", StopReason: "end_turn"}

// recorder collects events in order.
type recorder struct {
	mu     sync.Mutex
	events []domain.Event
	hooks  []func(domain.Event)
}

func (r *recorder) add(ev domain.Event) {
	r.mu.Lock()
	r.events = append(r.events, ev)
	hooks := slices.Clone(r.hooks)
	r.mu.Unlock()
	for _, h := range hooks {
		h(ev)
	}
}

// on registers a hook called with every later event, on the session's
// reader goroutine.
func (r *recorder) on(h func(domain.Event)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hooks = append(r.hooks, h)
}

func (r *recorder) all() []domain.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// shape renders events as "type" or "type:message" (tool results as
// "tool_result:<kind>:<ok|error>:<title>"), collapsing runs of empty
// notifications (one per chunk) into a single "notification*".
func (r *recorder) shape(normalize func(string) string) []string {
	return shapeOf(r.all(), normalize)
}

func shapeOf(events []domain.Event, normalize func(string) string) []string {
	out := []string{}
	for _, ev := range events {
		var s string
		switch {
		case ev.Type == domain.EventToolResult:
			status := "ok"
			if ev.ToolError {
				status = "error"
			}
			s = fmt.Sprintf("tool_result:%s:%s:%s", ev.ToolName, status, normalize(ev.Message))
		case ev.Type == domain.EventNotification && ev.Message == "":
			s = "notification*"
			if len(out) > 0 && out[len(out)-1] == s {
				continue
			}
		case ev.Message != "":
			s = string(ev.Type) + ":" + normalize(ev.Message)
		default:
			s = string(ev.Type)
		}
		out = append(out, s)
	}
	return out
}

// logBuffer is a concurrency-safe sink for logs.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// wireLog records every line acpdrive wrote to the runtime ("->") and read
// from it ("<-"), in the order they passed.
type wireLog struct {
	mu    sync.Mutex
	lines []wireLine
}

type wireLine struct {
	Out  bool // written by acpdrive
	At   time.Time
	Line string
}

func (w *wireLog) add(out bool, line string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines = append(w.lines, wireLine{Out: out, At: time.Now(), Line: line})
}

func (w *wireLog) all() []wireLine {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.lines)
}

func (w *wireLog) String() string {
	var b strings.Builder
	for _, l := range w.all() {
		dir := "<-"
		if l.Out {
			dir = "->"
		}
		line := l.Line
		if len(line) > 600 {
			line = line[:600] + "…"
		}
		fmt.Fprintf(&b, "%s %s %s\n", l.At.Format("15:04:05.000"), dir, line)
	}
	return b.String()
}

// wireMsg is one JSON-RPC message seen on the wire.
type wireMsg struct {
	Out    bool
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// messages decodes the wire lines that are JSON-RPC messages.
func (w *wireLog) messages() []wireMsg {
	var out []wireMsg
	for _, l := range w.all() {
		var m wireMsg
		if json.Unmarshal([]byte(l.Line), &m) != nil {
			continue
		}
		m.Out = l.Out
		out = append(out, m)
	}
	return out
}

// updateKind is the sessionUpdate discriminator of a session/update.
func (m wireMsg) updateKind() string {
	var p struct {
		Update struct {
			Kind string `json:"sessionUpdate"`
		} `json:"update"`
	}
	_ = json.Unmarshal(m.Params, &p)
	return p.Update.Kind
}

// methodsOut lists the methods acpdrive called or notified, in order.
func (w *wireLog) methodsOut() []string {
	var out []string
	for _, m := range w.messages() {
		if m.Out && m.Method != "" {
			out = append(out, m.Method)
		}
	}
	return out
}

// request returns the first message from the runtime with this method.
func (w *wireLog) request(method string) (wireMsg, bool) {
	for _, m := range w.messages() {
		if !m.Out && m.Method == method {
			return m, true
		}
	}
	return wireMsg{}, false
}

// answerTo returns acpdrive's answer to the runtime request with this id.
func (w *wireLog) answerTo(id json.RawMessage) (wireMsg, bool) {
	for _, m := range w.messages() {
		if m.Out && m.Method == "" && bytes.Equal(m.ID, id) {
			return m, true
		}
	}
	return wireMsg{}, false
}

// responseTo returns the runtime's answer to acpdrive's first call of
// method.
func (w *wireLog) responseTo(method string) (wireMsg, bool) {
	var id json.RawMessage
	for _, m := range w.messages() {
		switch {
		case id == nil && m.Out && m.Method == method && m.ID != nil:
			id = m.ID
		case id != nil && !m.Out && m.Method == "" && bytes.Equal(m.ID, id):
			return m, true
		}
	}
	return wireMsg{}, false
}

// tapLauncher launches through the local launcher and records the lines
// that cross the runtime's standard input and output.
type tapLauncher struct {
	inner ports.Launcher
	wire  *wireLog
}

func (l *tapLauncher) Launch(ctx context.Context, req ports.LaunchRequest) (ports.Process, error) {
	p, err := l.inner.Launch(ctx, req)
	if err != nil {
		return nil, err
	}
	return &tapProcess{
		Process: p,
		stdin:   &tapWriter{w: p.Stdin(), lines: lineSplitter{emit: func(s string) { l.wire.add(true, s) }}},
		stdout:  &tapReader{r: p.Stdout(), lines: lineSplitter{emit: func(s string) { l.wire.add(false, s) }}},
	}, nil
}

type tapProcess struct {
	ports.Process
	stdin  *tapWriter
	stdout *tapReader
}

func (p *tapProcess) Stdin() io.WriteCloser { return p.stdin }
func (p *tapProcess) Stdout() io.Reader     { return p.stdout }

type tapWriter struct {
	w     io.WriteCloser
	mu    sync.Mutex
	lines lineSplitter
}

func (w *tapWriter) Write(b []byte) (int, error) {
	n, err := w.w.Write(b)
	w.mu.Lock()
	w.lines.feed(b[:n])
	w.mu.Unlock()
	return n, err
}

func (w *tapWriter) Close() error { return w.w.Close() }

type tapReader struct {
	r     io.Reader
	lines lineSplitter
}

func (r *tapReader) Read(b []byte) (int, error) {
	n, err := r.r.Read(b)
	r.lines.feed(b[:n])
	return n, err
}

// lineSplitter turns a byte stream into lines.
type lineSplitter struct {
	buf  []byte
	emit func(string)
}

func (s *lineSplitter) feed(b []byte) {
	s.buf = append(s.buf, b...)
	for {
		i := bytes.IndexByte(s.buf, '\n')
		if i < 0 {
			return
		}
		s.emit(string(s.buf[:i]))
		s.buf = s.buf[i+1:]
	}
}

// cliRun is one `acpdrive run --json` invocation.
type cliRun struct {
	Code    int
	Stderr  string
	Events  []domain.Event
	Results []turnResultLine
	Run     *runResultLine
	Startup *startupFailedLine
	Elapsed time.Duration
}

type turnResultLine struct {
	Turn       int    `json:"turn"`
	Outcome    string `json:"outcome"`
	ErrorKind  string `json:"error_kind"`
	Retryable  *bool  `json:"retryable"`
	StopReason string `json:"stop_reason"`
	Message    string `json:"message"`
}

func (l turnResultLine) outcome() outcome {
	return outcome{Outcome: l.Outcome, Kind: l.ErrorKind, Message: l.Message, StopReason: l.StopReason}
}

type runResultLine struct {
	SessionID      string   `json:"session_id"`
	AgentPID       int      `json:"agent_pid"`
	CapabilityGaps []string `json:"capability_gaps"`
	Turns          int      `json:"turns"`
}

type startupFailedLine struct {
	ErrorKind string `json:"error_kind"`
	Message   string `json:"message"`
}

// cli runs `acpdrive run --json` on the rig's runtime with the rig's
// environment (acpdrive runs in it, and the runtime inherits it), then
// checks that no process of the runtime's group survives.
func (r *rig) cli(prompts ...string) cliRun {
	r.t.Helper()
	words := make([]string, len(r.command))
	for i, w := range r.command {
		words[i] = shellQuote(w)
	}
	args := []string{"run", "--json", "--log-level", "debug",
		"--command", strings.Join(words, " "),
		"--workspace", r.workspace,
		"--read-timeout", r.readTimeout.String(),
		"--stop-grace", r.stopGrace.String(),
		"--stall-timeout", "0",
		"--turn-timeout", "3m",
	}
	args = append(args, prompts...)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testbin.Path(r.t), args...)
	cmd.Dir = r.workspace
	cmd.Env = r.envList()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t0 := time.Now()
	err := cmd.Run()
	run := cliRun{Elapsed: time.Since(t0), Stderr: stderr.String()}
	r.logs.Write([]byte("== acpdrive run stderr\n" + run.Stderr + "\n== acpdrive run stdout\n" + stdout.String()))
	if ee, ok := err.(*exec.ExitError); ok {
		run.Code = ee.ExitCode()
	} else {
		require.NoError(r.t, err)
	}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var head struct {
			Type string `json:"type"`
		}
		require.NoError(r.t, json.Unmarshal(line, &head), "%s", line)
		switch head.Type {
		case "turn_result":
			var l turnResultLine
			require.NoError(r.t, json.Unmarshal(line, &l))
			run.Results = append(run.Results, l)
		case "run_result":
			var l runResultLine
			require.NoError(r.t, json.Unmarshal(line, &l))
			run.Run = &l
		case "startup_failed":
			var l startupFailedLine
			require.NoError(r.t, json.Unmarshal(line, &l))
			run.Startup = &l
		default:
			var ev domain.Event
			require.NoError(r.t, json.Unmarshal(line, &ev))
			run.Events = append(run.Events, ev)
		}
	}
	require.NoError(r.t, sc.Err())
	if run.Run != nil && run.Run.AgentPID != 0 {
		proctest.WaitGroupEmpty(r.t, run.Run.AgentPID, 3*time.Second)
	}
	for _, ev := range run.Events {
		if ev.AgentPID != 0 {
			proctest.WaitGroupEmpty(r.t, ev.AgentPID, 3*time.Second)
			break
		}
	}
	return run
}

// shape is the normalized event sequence of the CLI run.
func (c cliRun) shape(r *rig) []string { return shapeOf(c.Events, r.normalize) }

// outcomes are the CLI's turn results.
func (c cliRun) outcomes() []outcome {
	var out []outcome
	for _, l := range c.Results {
		out = append(out, l.outcome())
	}
	return out
}

// shellQuote quotes a word for acpdrive's --command splitting.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`|&;<>()*?[]#~=%") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// gapNotice is the once-per-session capability notice naming labels.
func gapNotice(labels ...domain.CapabilityLabel) string {
	names := make([]string, len(labels))
	for i, l := range labels {
		names[i] = string(l)
	}
	return "notification:" + domain.MsgCapabilityGapNotice + strings.Join(names, ", ")
}

// started is the event that opens every turn.
const started = "session_started:" + domain.MsgSessionStarted

// refused is the notification of a refused permission request.
const refused = "notification:" + domain.MsgPermissionRefused

// capsLine renders what initialize advertised and the capability record,
// for the test log (docs/runtimes.md is written from it).
func capsLine(sess *app.Session) string {
	init := sess.AgentInfo()
	raw, _ := json.Marshal(init)
	caps, _ := json.Marshal(sess.Capabilities())
	return fmt.Sprintf("initialize: %s\ncapabilities: %s", raw, caps)
}

// proctestGone checks that no member of the process group pid survives
// (pid 0: nothing was started).
func proctestGone(t *testing.T, pid int) {
	t.Helper()
	if pid != 0 {
		proctest.WaitGroupEmpty(t, pid, 3*time.Second)
	}
}

// writeFile writes a file, making its directory.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}
