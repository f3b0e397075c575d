package codex_measure_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/codex_measure"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

const sessionID = "01a230ec-0a8c-7cc1-9c09-afa242361d97"

// The figures of the fixtures' turns (testdata/turn*.jsonl).
var (
	turn1 = domain.Usage{InputTokens: 100, CacheReadTokens: 30, OutputTokens: 10, ReasoningTokens: 4, TotalTokens: 114}
	// turn2 is the sum of its two model calls.
	turn2 = domain.Usage{InputTokens: 450, CacheReadTokens: 260, OutputTokens: 35, ReasoningTokens: 8, TotalTokens: 493}
	turn3 = domain.Usage{InputTokens: 300, CacheReadTokens: 90, OutputTokens: 30, ReasoningTokens: 12, TotalTokens: 342}
)

func TestRecognizes(t *testing.T) {
	t.Parallel()
	src := codex_measure.New(codex_measure.Options{})
	cases := []struct {
		name string
		want bool
	}{
		{"codex-acp", true},
		{"@agentclientprotocol/codex-acp", true},
		{"@agentclientprotocol/codex-acp@2.6.0", true},
		{"@zed-industries/codex-acp", true},
		{"Codex-ACP", true},
		{"codex", false},
		{"@agentclientprotocol/claude-agent-acp", false},
		{"", false},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, src.Recognizes(c.name), "%q", c.name)
	}
}

func TestClaims(t *testing.T) {
	t.Parallel()
	src := codex_measure.New(codex_measure.Options{})
	cases := []struct {
		name    string
		command []string
		want    bool
	}{
		{"bare program", []string{"codex-acp"}, true},
		{"absolute program", []string{"/opt/tools/bin/codex-acp"}, true},
		{"npm bin link", []string{"node_modules/.bin/codex-acp", "--verbose"}, true},
		{"node running the bin script", []string{"node", "/opt/n/node_modules/@zed-industries/codex-acp/bin/codex-acp.js"}, true},
		{"node running the package folder", []string{"node", "/opt/n/node_modules/@zed-industries/codex-acp"}, true},
		{"npx with the package", []string{"npx", "-y", "@zed-industries/codex-acp"}, true},
		{"npx with a pinned version", []string{"npx", "@zed-industries/codex-acp@0.16.0"}, true},
		{"npx with the new package", []string{"npx", "@agentclientprotocol/codex-acp@2.6.0"}, true},
		{"node running the new package's bin script", []string{"node", "/opt/n/node_modules/@agentclientprotocol/codex-acp/bin/codex-acp.js"}, true},
		{"new package name as a prefix", []string{"npx", "@agentclientprotocol/codex-acpx"}, false},
		{"through env", []string{"env", "-i", "CODEX_HOME=/srv/codex", "codex-acp"}, true},
		{"windows program", []string{`C:\tools\codex-acp.exe`}, true},
		{"native binary in the platform package", []string{"/opt/n/node_modules/@zed-industries/codex-acp-linux-x64/bin/codex-acp"}, true},
		{"empty", nil, false},
		{"codex alone", []string{"codex", "acp"}, false},
		{"codex cli", []string{"/usr/bin/codex"}, false},
		{"another runtime", []string{"gemini", "--acp"}, false},
		{"wrapper of another name", []string{"./run-agent.sh"}, false},
		{"longer name", []string{"codex-acp-wrapper"}, false},
		{"prefixed name", []string{"my-codex-acp"}, false},
		{"platform binary link", []string{"node_modules/.bin/codex-acp-linux-x64"}, false},
		{"shell script of that name", []string{"codex-acp.sh"}, false},
		{"flag value", []string{"agent", "--runtime=codex-acp"}, false},
		{"another package of the scope", []string{"npx", "@zed-industries/claude-agent-acp"}, false},
		{"package name as a prefix", []string{"npx", "@zed-industries/codex-acpx"}, false},
		{"trailing slash", []string{"/opt/codex-acp/"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, src.Claims(c.command), "%q", c.command)
		})
	}
}

func TestNames(t *testing.T) {
	t.Parallel()
	var src ports.MeasurementSource = codex_measure.New(codex_measure.Options{})
	assert.Equal(t, "codex_rollout", src.Name())
	assert.Equal(t, "codex-acp", src.RuntimeName())
}

func TestArmAndRelease(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	src := codex_measure.New(codex_measure.Options{Home: t.TempDir()})
	m, err := src.Arm(context.Background())
	require.NoError(t, err)
	assert.Empty(t, m.Env(), "CODEX_HOME is not relocated")

	entries, err := os.ReadDir(tmp)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	dir := filepath.Join(tmp, entries[0].Name())
	info, err := os.Stat(dir)
	require.NoError(t, err)
	assert.True(t, info.IsDir())
	assert.Equal(t, os.FileMode(0o700), info.Mode().Perm())

	require.NoError(t, m.Release())
	_, err = os.Stat(dir)
	assert.True(t, os.IsNotExist(err), "the directory is removed")
	require.NoError(t, m.Release(), "a second release is harmless")

	_, _, ok, err := m.TurnUsage(context.Background(), sessionID)
	assert.False(t, ok)
	assert.Error(t, err)
}

func TestArmCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := codex_measure.New(codex_measure.Options{Home: t.TempDir()}).Arm(ctx)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestHomeDefaults(t *testing.T) {
	user := t.TempDir()
	t.Setenv("HOME", user)
	t.Setenv("CODEX_HOME", "")
	w := worldAt(t, filepath.Join(user, ".codex"), codex_measure.Options{})
	w.write("turn1.jsonl")
	w.open(false)
	w.wantTurn(turn1, "gpt-5.4")

	env := t.TempDir()
	t.Setenv("CODEX_HOME", env)
	w = worldAt(t, env, codex_measure.Options{})
	w.write("turn1.jsonl")
	w.open(false)
	w.wantTurn(turn1, "gpt-5.4")
}

// TestTwoTurns: each turn reports its own figures, never the running
// total; the second turn's two model calls are summed and a rate-limit
// token_count (info null) is no record.
func TestTwoTurns(t *testing.T) {
	t.Parallel()
	w := newWorld(t, codex_measure.Options{})
	w.open(false) // a new session: no rollout yet
	w.write("turn1.jsonl")
	w.wantTurn(turn1, "gpt-5.4")
	w.write("turn2.jsonl")
	w.wantTurn(turn2, "gpt-5.4")
	assert.NotContains(t, w.logs.String(), "disagree")
}

// TestSeveralRecordsOneTurn: a turn's figures are the sum of its
// token_count records' last_token_usage, whatever the order in which the
// file grows.
func TestSeveralRecordsOneTurn(t *testing.T) {
	t.Parallel()
	w := newWorld(t, codex_measure.Options{})
	w.write("turn1.jsonl")
	w.open(false)
	w.wantTurn(turn1, "gpt-5.4")

	lines := fixtureLines(t, "turn2.jsonl")
	done := w.turnAsync()
	for _, l := range lines {
		w.appendRaw(l + "\n")
	}
	res := <-done
	require.NoError(t, res.err)
	require.True(t, res.ok)
	assert.Equal(t, domain.UsageMeaning{InputIncludesCache: true}.Normalize(turn2), res.usage)
}

// TestPartialTrailingLine: a line without its newline is not read until
// it is complete, even when it parses: the turn's end without its newline
// does not end it.
func TestPartialTrailingLine(t *testing.T) {
	t.Parallel()
	w := newWorld(t, codex_measure.Options{})
	w.open(false)
	data := fixture(t, "turn1.jsonl")
	end := len(data) - 1 // the task_complete line, whole but for its newline
	w.appendRaw(data[:end])
	usage, model, ok, err := w.turnNow()
	require.NoError(t, err)
	require.True(t, ok, "the records before the last line were read")
	assert.Equal(t, domain.UsageMeaning{InputIncludesCache: true}.Normalize(turn1), usage)
	assert.Equal(t, "gpt-5.4", model)
	assert.Contains(t, w.logs.String(), "the turn's end was not read in time", "the line without its newline did not end the turn")
	assert.NotContains(t, w.logs.String(), "codex rollout: turn figures read")

	// Completed, the end is that turn's, already reported; the next turn
	// reports its own.
	w.appendRaw(data[end:])
	w.write("turn2.jsonl")
	w.wantTurn(turn2, "gpt-5.4")
}

// TestContinuedSession: a continued session's earlier turns are not
// counted again; reading starts at the rollout's size at SessionOpened.
func TestContinuedSession(t *testing.T) {
	t.Parallel()
	w := newWorld(t, codex_measure.Options{})
	w.write("turn1.jsonl")
	w.write("turn2.jsonl")
	w.open(true)
	_, _, ok, err := w.turn(60 * time.Millisecond)
	assert.False(t, ok, "no earlier turn is reported")
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	w.write("turn3.jsonl")
	w.wantTurn(turn3, "gpt-5.4-mini")
	assert.NotContains(t, w.logs.String(), "disagree", "the running total before the turn was read from the earlier part")
}

// TestContinuedSessionFoundLate: when a continued session's rollout is
// not found at SessionOpened, records stamped before it do not count.
func TestContinuedSessionFoundLate(t *testing.T) {
	t.Parallel()
	opened := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	w := newWorld(t, codex_measure.Options{Now: func() time.Time { return opened }})
	w.open(true)
	w.write("turn1.jsonl")
	w.write("turn2.jsonl")
	_, _, ok, err := w.turn(60 * time.Millisecond)
	assert.False(t, ok, "no turn stamped before the session opened is reported")
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	w.write("turn3.jsonl")
	w.wantTurn(turn3, "gpt-5.4-mini")
}

// TestTurnEndWithoutRecord: a turn that ended with no complete record
// (cancelled before a model call finished, or a token_count lacking a
// counter) reports nothing, without an error: the source answered.
func TestTurnEndWithoutRecord(t *testing.T) {
	t.Parallel()
	w := newWorld(t, codex_measure.Options{})
	w.open(false)
	w.appendRaw(`{"timestamp":"2026-12-01T09:25:05.400Z","type":"event_msg","payload":{"type":"task_started","turn_id":"t1"}}
{"timestamp":"2026-12-01T09:25:05.401Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":100,"cached_input_tokens":0,"output_tokens":10,"total_tokens":110},"last_token_usage":{"input_tokens":100,"cached_input_tokens":0,"output_tokens":10,"total_tokens":110}}}}
{"timestamp":"2026-12-01T09:25:05.402Z","type":"event_msg","payload":{"type":"turn_aborted","turn_id":"t1","reason":"interrupted"}}
`)
	_, _, ok, err := w.turn(time.Second)
	assert.False(t, ok, "a record without reasoning_output_tokens does not count")
	assert.NoError(t, err)
	assert.Contains(t, w.logs.String(), "lacks a counter")

	w.write("turn2.jsonl")
	w.wantTurn(turn2, "gpt-5.4")
}

// TestNoRollout: the wait is bounded by its context.
func TestNoRollout(t *testing.T) {
	t.Parallel()
	w := newWorld(t, codex_measure.Options{})
	w.open(false)
	_, _, ok, err := w.turn(80 * time.Millisecond)
	assert.False(t, ok)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

// TestEndNotRead: when the wait ends after a turn's records but before its
// end, the records read are that turn's figures; its end, read later, is
// not counted again, and the next turn reports its own.
func TestEndNotRead(t *testing.T) {
	t.Parallel()
	w := newWorld(t, codex_measure.Options{})
	w.open(false)
	data := fixture(t, "turn1.jsonl")
	end := strings.LastIndex(data, `{"timestamp"`)
	w.appendRaw(data[:end])
	usage, model, ok, err := w.turn(80 * time.Millisecond)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, domain.UsageMeaning{InputIncludesCache: true}.Normalize(turn1), usage)
	assert.Equal(t, "gpt-5.4", model)

	w.appendRaw(data[end:])
	w.write("turn2.jsonl")
	w.wantTurn(turn2, "gpt-5.4")
}

// TestStaleTurnDiscarded: a turn whose wait gave up after reading its
// start is not reported for the next turn.
func TestStaleTurnDiscarded(t *testing.T) {
	t.Parallel()
	w := newWorld(t, codex_measure.Options{})
	w.open(false)
	lines := fixtureLines(t, "turn1.jsonl")
	w.appendRaw(strings.Join(lines[:3], "\n") + "\n") // started, no record yet
	_, _, ok, err := w.turn(60 * time.Millisecond)
	assert.False(t, ok)
	assert.ErrorIs(t, err, context.DeadlineExceeded)

	w.appendRaw(strings.Join(lines[3:], "\n") + "\n")
	_, _, ok, err = w.turnNow()
	assert.False(t, ok, "the first turn's late end is not the second turn's")
	assert.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, w.logs.String(), "discarded the figures of an earlier turn")
	w.write("turn2.jsonl")
	w.wantTurn(turn2, "gpt-5.4")
}

// TestTotalsDisagree: the per-call figures are reported when the running
// total's difference says otherwise, and the disagreement is logged.
func TestTotalsDisagree(t *testing.T) {
	t.Parallel()
	w := newWorld(t, codex_measure.Options{})
	w.open(false)
	w.write("turn1.jsonl")
	w.wantTurn(turn1, "gpt-5.4")
	// The running total jumps by more than the call's own figures.
	w.write("turn3.jsonl")
	w.wantTurn(turn3, "gpt-5.4-mini")
	assert.Contains(t, w.logs.String(), "disagree")
}

// world is one test's CODEX_HOME, source and armed measurement.
type world struct {
	t    *testing.T
	home string
	path string
	m    ports.Measurement
	logs *syncBuffer
}

// newWorld makes a world whose CODEX_HOME is given as Options.Home.
func newWorld(t *testing.T, opts codex_measure.Options) *world {
	t.Helper()
	opts.Home = t.TempDir()
	return worldAt(t, opts.Home, opts)
}

// worldAt makes a world whose rollouts are written under home.
func worldAt(t *testing.T, home string, opts codex_measure.Options) *world {
	t.Helper()
	logs := &syncBuffer{}
	opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts.Poll = 5 * time.Millisecond
	m, err := codex_measure.New(opts).Arm(context.Background())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, m.Release()) })
	day := time.Now()
	if opts.Now != nil {
		day = opts.Now()
	}
	dir := filepath.Join(home, "sessions", day.Format("2006"), day.Format("01"), day.Format("02"))
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return &world{t: t, home: home, m: m, logs: logs,
		path: filepath.Join(dir, "rollout-"+day.Format("2006-01-02T15-04-05")+"-"+sessionID+".jsonl")}
}

func (w *world) open(continued bool) { w.m.SessionOpened(sessionID, continued) }

// write appends a fixture to the rollout.
func (w *world) write(name string) { w.appendRaw(fixture(w.t, name)) }

func (w *world) appendRaw(s string) {
	f, err := os.OpenFile(w.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	require.NoError(w.t, err)
	_, err = f.WriteString(s)
	require.NoError(w.t, err)
	require.NoError(w.t, f.Close())
}

func (w *world) turn(within time.Duration) (domain.Usage, string, bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	return w.m.TurnUsage(ctx, sessionID)
}

// turnNow is a wait whose context is already done: it reads the rollout
// once.
func (w *world) turnNow() (domain.Usage, string, bool, error) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return w.m.TurnUsage(ctx, sessionID)
}

func (w *world) wantTurn(want domain.Usage, model string) {
	w.t.Helper()
	usage, gotModel, ok, err := w.turn(2 * time.Second)
	require.NoError(w.t, err, w.logs.String())
	require.True(w.t, ok, w.logs.String())
	// The fixtures hold the rollout's raw figures; the source reports them
	// in the one meaning (cached input out of input, total their sum).
	assert.Equal(w.t, domain.UsageMeaning{InputIncludesCache: true}.Normalize(want), usage)
	assert.Equal(w.t, model, gotModel)
}

type turnResult struct {
	usage domain.Usage
	model string
	ok    bool
	err   error
}

func (w *world) turnAsync() <-chan turnResult {
	done := make(chan turnResult, 1)
	go func() {
		u, m, ok, err := w.turn(2 * time.Second)
		done <- turnResult{u, m, ok, err}
	}()
	return done
}

// fixture is a testdata rollout fragment naming the test's session.
func fixture(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return strings.ReplaceAll(string(raw), "SESSION", sessionID)
}

func fixtureLines(t *testing.T, name string) []string {
	return strings.Split(strings.TrimSuffix(fixture(t, name), "\n"), "\n")
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
