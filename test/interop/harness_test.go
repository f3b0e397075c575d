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
	"github.com/acpdrive/acpdrive/adapters/sysclock"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/eventrec"
	"github.com/acpdrive/acpdrive/internal/testsupport/proctest"
	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
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

// runtimesDir is where the suite looks for the runtimes: one entry per
// runtime name, each a link scripts/install-runtimes.sh made to the
// runtime's folder in the cache outside the clone
// (<cache>/<name>-<version>, see the script). It is .cache/runtimes/ in
// the clone unless ACPDRIVE_RUNTIMES_DIR names another folder (the script
// honours the same variable). Symbolic links are resolved (a worktree may
// link .cache to another checkout's).
func runtimesDir() string {
	dir := os.Getenv("ACPDRIVE_RUNTIMES_DIR")
	if dir == "" {
		dir = filepath.Join(repoRoot(), ".cache", "runtimes")
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		return real
	}
	return dir
}

// runtimePath is rel (its first element a runtime's name) below
// runtimesDir(), with the runtime's link resolved: runtimes see their own
// real paths (in the cache), and tests compare with them. Links inside
// the runtime's folder (node_modules/.bin) are kept.
func runtimePath(rel string) string {
	name, rest, _ := strings.Cut(filepath.ToSlash(rel), "/")
	dir := filepath.Join(runtimesDir(), name)
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	return filepath.Join(dir, filepath.FromSlash(rest))
}

// locate returns the absolute path of an installed runtime file, rel to
// runtimesDir() (its first element the runtime's folder). A missing
// runtime fails the test in CI and skips it elsewhere, naming the install
// command.
func locate(t testing.TB, name, rel string) string {
	t.Helper()
	p := runtimePath(rel)
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
func nodePath(t testing.TB) string {
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
	t         testing.TB
	root      string // per-test directory holding everything below
	home      string
	workspace string
	tmp       string
	env       map[string]string
	command   []string

	rec  *eventrec.Recorder
	logs *eventrec.Log
	wire *wireLog

	readTimeout time.Duration
	stopGrace   time.Duration
	servers     []*fakes.Server
	// measure lets `acpdrive run` arm the measurement sources it ships;
	// off by default, so the CLI's event shapes match the library's
	// (whose sessions get no source unless a test passes one).
	measure bool

	// past holds the recorders of earlier phases (see phase), dumped on
	// failure with the current ones.
	past []rigPhase
	// creations is the creation store every library session of the rig
	// shares, so a load right after a creation waits out the
	// creation-minute hold as one acpdrive process would.
	creations app.CreationStore
	// rewrite, when set, rewrites each line the runtime writes before
	// acpdrive reads it (library sessions only; see maskInit).
	rewrite func(line string) string
	// ns, when set, is the network namespace the runtime runs in (see
	// offline).
	ns *netNamespace
}

// rigPhase is what one phase of a multi-session test recorded.
type rigPhase struct {
	name string
	rec  *eventrec.Recorder
	wire *wireLog
}

func newRig(t testing.TB, command ...string) *rig {
	t.Helper()
	root := t.TempDir()
	r := &rig{
		t:           t,
		root:        root,
		home:        filepath.Join(root, "home"),
		workspace:   filepath.Join(root, "workspace"),
		tmp:         filepath.Join(root, "tmp"),
		command:     command,
		logs:        &eventrec.Log{},
		wire:        &wireLog{},
		readTimeout: 30 * time.Second,
		stopGrace:   5 * time.Second,
		creations:   app.NewMemoryCreations(),
	}
	r.rec = &eventrec.Recorder{Normalize: r.normalize}
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
	if r.ns != nil {
		r.ns.forward(r.t, strings.TrimPrefix(s.URL(), "http://"))
	}
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
	for _, p := range r.past {
		r.t.Logf("wire of phase %q:\n%s", p.name, p.wire.String())
		r.t.Logf("events of phase %q:\n%s", p.name, strings.Join(p.rec.Shape(), "\n"))
	}
	r.t.Logf("acpdrive log:\n%s", r.logs.String())
	r.t.Logf("wire:\n%s", r.wire.String())
	r.t.Logf("events:\n%s", strings.Join(r.rec.Shape(), "\n"))
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

// phase starts a new phase of a test that runs several sessions on one
// rig (same HOME, workspace and fake server): the wire log and the event
// recorder start empty; the earlier ones are kept for the failure dump.
// The acpdrive log goes on accumulating, with a marker line.
func (r *rig) phase(name string) {
	r.past = append(r.past, rigPhase{name: fmt.Sprintf("before %s", name), rec: r.rec, wire: r.wire})
	r.rec, r.wire = &eventrec.Recorder{Normalize: r.normalize}, &wireLog{}
	fmt.Fprintf(r.logs, "== phase %s\n", name)
}

// bind makes the rig report to t (a subtest of the test that made it)
// until the returned function restores the previous one.
func (r *rig) bind(t *testing.T) func() {
	prev := r.t
	r.t = t
	return func() { r.t = prev }
}

type optFn func(*app.Options)

// options are the app.Options of a library session on this rig. The
// runtime starts through `env -i` with exactly the rig's environment.
func (r *rig) options(opts ...optFn) app.Options {
	cfg := domain.DefaultSessionSettings()
	cfg.Command = append(append([]string{"env", "-i"}, r.envList()...), r.command...)
	if r.ns != nil {
		cfg.Command = append(r.ns.prefix(), cfg.Command...)
	}
	cfg.ReadTimeout = r.readTimeout
	cfg.StopGrace = r.stopGrace
	cfg.StallTimeout = 0
	cfg.TurnTimeout = 3 * time.Minute
	logger := slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	o := app.Options{
		Settings:  cfg,
		Workspace: r.workspace,
		Launcher:  &tapLauncher{inner: localexec.New(localexec.Options{Logger: logger}), wire: r.wire, rewrite: r.rewrite},
		Clock:     sysclock.Clock{},
		Creations: r.creations,
		Logger:    logger,
		OnEvent:   r.rec.Add,
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
func (r *rig) shape() []string { return r.rec.Shape() }

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

// sessionID is params.sessionId of a notification or request.
func (m wireMsg) sessionID() string {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(m.Params, &p)
	return p.SessionID
}

// around returns the session/update notifications the runtime sent while
// acpdrive's first call of method was open (during) and those between its
// response and acpdrive's next call or notification (after); ok is false
// when the call or its response is missing.
func (w *wireLog) around(method string) (during, after []wireMsg, ok bool) {
	var id json.RawMessage
	answered := false
	for _, m := range w.messages() {
		switch {
		case id == nil:
			if m.Out && m.Method == method && m.ID != nil {
				id = m.ID
			}
		case !answered && !m.Out && m.Method == "" && bytes.Equal(m.ID, id):
			answered = true
		case !answered && !m.Out && m.Method == "session/update":
			during = append(during, m)
		case answered && m.Out && m.Method != "":
			return during, after, true
		case answered && !m.Out && m.Method == "session/update":
			after = append(after, m)
		}
	}
	return during, after, answered
}

// tapLauncher launches through the local launcher and records the lines
// that cross the runtime's standard input and output.
//
// With rewrite set, each line the runtime writes is passed through it
// before acpdrive reads it; the wire log records the line acpdrive read.
type tapLauncher struct {
	inner   ports.Launcher
	wire    *wireLog
	rewrite func(string) string
}

// Prepare prepares through the inner launcher and wraps the plan so each
// start it makes is tapped.
func (l *tapLauncher) Prepare(req ports.LaunchRequest) (ports.Plan, error) {
	plan, err := l.inner.Prepare(req)
	if err != nil {
		return nil, err
	}
	return &tapPlan{Plan: plan, l: l}, nil
}

// tapPlan is a plan whose every start records and, with rewrite set,
// rewrites the streams of the process it starts.
type tapPlan struct {
	ports.Plan
	l *tapLauncher
}

func (p *tapPlan) Start(ctx context.Context, env []string) (ports.Process, error) {
	proc, err := p.Plan.Start(ctx, env)
	if err != nil {
		return nil, err
	}
	l := p.l
	var stdout io.Reader = &tapReader{r: proc.Stdout(), lines: lineSplitter{emit: func(s string) { l.wire.add(false, s) }}}
	if l.rewrite != nil {
		stdout = &rewriteReader{r: proc.Stdout(), rewrite: l.rewrite, emit: func(s string) { l.wire.add(false, s) }}
	}
	return &tapProcess{
		Process: proc,
		stdin:   &tapWriter{w: proc.Stdin(), lines: lineSplitter{emit: func(s string) { l.wire.add(true, s) }}},
		stdout:  stdout,
	}, nil
}

// rewriteReader reads the runtime's output line by line and hands acpdrive
// each line as rewrite returns it (a trailing partial line at EOF as is).
// It reads only when acpdrive reads, on acpdrive's goroutine.
type rewriteReader struct {
	r       io.Reader
	rewrite func(string) string
	emit    func(string)
	in      []byte // read, not yet a whole line
	out     []byte // rewritten, not yet handed over
	err     error
}

func (r *rewriteReader) Read(b []byte) (int, error) {
	chunk := make([]byte, 32<<10)
	for len(r.out) == 0 {
		if r.err != nil {
			if len(r.in) > 0 {
				r.out, r.in = r.in, nil
				break
			}
			return 0, r.err
		}
		n, err := r.r.Read(chunk)
		r.in = append(r.in, chunk[:n]...)
		r.err = err
		for {
			i := bytes.IndexByte(r.in, '\n')
			if i < 0 {
				break
			}
			line := r.rewrite(string(r.in[:i]))
			r.in = r.in[i+1:]
			r.emit(line)
			r.out = append(append(r.out, line...), '\n')
		}
	}
	n := copy(b, r.out)
	r.out = r.out[n:]
	return n, nil
}

type tapProcess struct {
	ports.Process
	stdin  *tapWriter
	stdout io.Reader
}

func (p *tapProcess) Stdin() io.WriteCloser { return p.stdin }
func (p *tapProcess) Stdout() io.Reader     { return p.stdout }

type tapWriter struct {
	w     io.WriteCloser
	mu    sync.Mutex
	lines lineSplitter
}

// Write records the lines before it writes them: a runtime can answer a
// request before the write returns, and the log must keep the request
// first.
func (w *tapWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines.feed(b)
	return w.w.Write(b)
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
	Turn       int           `json:"turn"`
	Outcome    string        `json:"outcome"`
	ErrorKind  string        `json:"error_kind"`
	Retryable  *bool         `json:"retryable"`
	StopReason string        `json:"stop_reason"`
	Message    string        `json:"message"`
	Usage      *domain.Usage `json:"usage"`
	Model      string        `json:"model"`
}

func (l turnResultLine) outcome() outcome {
	return outcome{Outcome: l.Outcome, Kind: l.ErrorKind, Message: l.Message, StopReason: l.StopReason}
}

type runResultLine struct {
	SessionID      string        `json:"session_id"`
	AgentPID       int           `json:"agent_pid"`
	CapabilityGaps []string      `json:"capability_gaps"`
	Turns          int           `json:"turns"`
	Usage          *domain.Usage `json:"usage"`
	MeasuredTurns  int           `json:"measured_turns"`
	// ToolServers is the tool-server confirmation's verdict
	// (--confirm-tool-servers; see confirm_helpers_test.go).
	ToolServers *domain.ToolServerCheck `json:"tool_servers"`
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
	return r.cliWith(nil, prompts...)
}

// launchFlags are the flags `acpdrive run` and `acpdrive probe` share,
// set to the rig's runtime, workspace and bounds.
func (r *rig) launchFlags() []string {
	command := r.launchCommand()
	words := make([]string, len(command))
	for i, w := range command {
		words[i] = shellQuote(w)
	}
	return []string{"--log-level", "debug",
		"--command", strings.Join(words, " "),
		"--workspace", r.workspace,
		"--read-timeout", r.readTimeout.String(),
		"--stop-grace", r.stopGrace.String(),
	}
}

// acpdrive runs the acpdrive binary with args in the rig's environment
// and workspace, bounded at five minutes, and returns its output and exit
// code. Its stderr goes to the rig's log under a header naming the
// subcommand.
func (r *rig) acpdrive(args ...string) (stdout, stderr string, code int) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testbin.Path(r.t), args...)
	cmd.Dir = r.workspace
	cmd.Env = r.envList()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	fmt.Fprintf(r.logs, "== acpdrive %s stderr\n%s\n== acpdrive %s stdout\n%s", args[0], errOut.String(), args[0], out.String())
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(r.t, err)
	}
	return out.String(), errOut.String(), code
}

// cliWith is cli with extra flags of `acpdrive run` (such as --resume).
func (r *rig) cliWith(flags []string, prompts ...string) cliRun {
	r.t.Helper()
	args := append([]string{"run", "--json"}, r.launchFlags()...)
	args = append(args, "--stall-timeout", "0", "--turn-timeout", "3m")
	if !r.measure {
		args = append(args, "--no-measure")
	}
	args = append(args, flags...)
	args = append(args, prompts...)
	t0 := time.Now()
	out, errOut, code := r.acpdrive(args...)
	run := cliRun{Elapsed: time.Since(t0), Stderr: errOut, Code: code}
	stdout := bytes.NewBufferString(out)
	sc := bufio.NewScanner(stdout)
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
func (c cliRun) shape(r *rig) []string { return eventrec.Shape(c.Events, r.normalize) }

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
func writeFile(t testing.TB, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}
