package claude_measure

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

const sid = "0b6f3c9e-6d1e-4f57-9c55-2a7c1d2b9e10"

// The figures of the fixtures' turns (testdata/turn1.jsonl, turn2.jsonl).
var (
	// turn 1: msg_A (last write: 100/12/20/5) and msg_B (130/4/125/0).
	turn1 = domain.Usage{InputTokens: 230, OutputTokens: 16, CacheReadTokens: 145, CacheWriteTokens: 5, TotalTokens: 396}
	// turn 2: msg_C only (msg_X lacks cache_creation_input_tokens,
	// msg_S is Claude Code's own).
	turn2 = domain.Usage{InputTokens: 300, OutputTokens: 2, CacheWriteTokens: 40, TotalTokens: 342}
)

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

// world is a config home with a project folder for one workspace.
type world struct {
	t      *testing.T
	config string
	path   string // the session's transcript
}

func newWorld(t *testing.T) *world {
	t.Helper()
	config := filepath.Join(t.TempDir(), "claude-config")
	folder := filepath.Join(config, "projects", "-tmp-some-workspace")
	require.NoError(t, os.MkdirAll(folder, 0o755))
	// Another project's folder, holding other sessions.
	other := filepath.Join(config, "projects", "-home-user-other")
	require.NoError(t, os.MkdirAll(other, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(other, "another-session.jsonl"), fixture(t, "turn1.jsonl"), 0o644))
	return &world{t: t, config: config, path: filepath.Join(folder, sid+".jsonl")}
}

func (w *world) append(b []byte) {
	w.t.Helper()
	f, err := os.OpenFile(w.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	require.NoError(w.t, err)
	_, err = f.Write(b)
	require.NoError(w.t, err)
	require.NoError(w.t, f.Close())
}

func (w *world) arm(settle time.Duration) ports.Measurement {
	w.t.Helper()
	m, err := New(Options{ConfigDir: w.config, Settle: settle}).Arm(context.Background())
	require.NoError(w.t, err)
	w.t.Cleanup(func() { _ = m.Release() })
	return m
}

// armLogged is arm with the source's Debug records kept in logs.
func (w *world) armLogged(settle time.Duration, logs *bytes.Buffer) ports.Measurement {
	w.t.Helper()
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	m, err := New(Options{ConfigDir: w.config, Settle: settle, Logger: log}).Arm(context.Background())
	require.NoError(w.t, err)
	w.t.Cleanup(func() { _ = m.Release() })
	return m
}

// turnNow is a wait whose context is already done: it reads the
// transcript once.
func turnNow(m ports.Measurement) (domain.Usage, string, bool, error) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return m.TurnUsage(ctx, sid)
}

// appending writes b from a goroutine of its own while the test waits; the
// returned func awaits it.
func (w *world) appending(b []byte) (await func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.append(b)
	}()
	return func() { <-done }
}

func turnUsage(t *testing.T, m ports.Measurement, wait time.Duration) (domain.Usage, string, bool, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	return m.TurnUsage(ctx, sid)
}

func TestIdentity(t *testing.T) {
	s := New(Options{})
	assert.Equal(t, "claude_transcript", s.Name())
	assert.Equal(t, "@zed-industries/claude-agent-acp", s.RuntimeName())
}

func TestRecognizes(t *testing.T) {
	cases := []struct {
		name string
		want bool
	}{
		{"@zed-industries/claude-agent-acp", true},
		{"@agentclientprotocol/claude-agent-acp", true},
		{"@agentclientprotocol/claude-agent-acp@0.101.0", true},
		{"@AgentClientProtocol/Claude-Agent-ACP", true},
		{" claude-agent-acp ", true},
		{"", false},
		{"@", false},
		{"codex-acp", false},
		{"@agentclientprotocol/codex-acp", false},
		{"@agentclientprotocol/claude-agent-acp-next", false},
		{"claude", false},
	}
	s := New(Options{})
	for _, c := range cases {
		assert.Equal(t, c.want, s.Recognizes(c.name), "%q", c.name)
	}
}

func TestClaims(t *testing.T) {
	cases := []struct {
		name    string
		command []string
		want    bool
	}{
		{"bare bin", []string{"claude-agent-acp"}, true},
		{"bin link", []string{"/opt/rt/node_modules/.bin/claude-agent-acp"}, true},
		{"relative bin", []string{"./node_modules/.bin/claude-agent-acp", "--verbose"}, true},
		{"behind env -i", []string{"env", "-i", "HOME=/h", "PATH=/bin", "/x/node_modules/.bin/claude-agent-acp"}, true},
		{"node on the package entry", []string{"node", "/x/node_modules/@zed-industries/claude-agent-acp/dist/index.js"}, true},
		{"windows node on the package entry", []string{`C:\node\node.exe`, `C:\x\node_modules\@zed-industries\claude-agent-acp\dist\index.js`}, true},
		{"windows shim", []string{`C:\x\node_modules\.bin\claude-agent-acp.cmd`}, true},
		{"windows exe", []string{`claude-agent-acp.EXE`}, true},
		{"npx package", []string{"npx", "-y", "@zed-industries/claude-agent-acp"}, true},
		{"npx package at a version", []string{"npx", "@zed-industries/claude-agent-acp@0.23.1"}, true},
		{"npx new package", []string{"npx", "-y", "@agentclientprotocol/claude-agent-acp@0.101.0"}, true},
		{"node on the new package entry", []string{"node", "/x/node_modules/@agentclientprotocol/claude-agent-acp/dist/index.js"}, true},
		{"new package name as a prefix", []string{"npx", "@agentclientprotocol/claude-agent-acp-next"}, false},
		{"empty", nil, false},
		{"empty word", []string{""}, false},
		{"claude code cli", []string{"claude", "--print"}, false},
		{"gemini", []string{"gemini", "--acp"}, false},
		{"codex-acp", []string{"codex-acp"}, false},
		{"older adapter name", []string{"claude-code-acp"}, false},
		{"wrapper containing the name", []string{"/usr/local/bin/my-claude-agent-acp-wrapper"}, false},
		{"name as a prefix", []string{"claude-agent-acp2"}, false},
		{"other extension", []string{"claude-agent-acp.sh"}, false},
		{"directory in another program's path", []string{"/opt/claude-agent-acp/bin/agent"}, false},
		{"package directory (its base name)", []string{"node", "/x/node_modules/@zed-industries/claude-agent-acp"}, true},
		{"package directory with slash", []string{"node", "/x/node_modules/@zed-industries/claude-agent-acp/"}, true},
		{"other scope", []string{"node", "/x/node_modules/@someone/claude-agent-acp-fork/dist/index.js"}, false},
		{"npx --package flag (base name)", []string{"npx", "--package=@zed-industries/claude-agent-acp", "claude-agent-acp"}, true},
		{"package name as a prefix", []string{"npx", "@zed-industries/claude-agent-acp-next"}, false},
		{"ssh-like program", []string{"ssh", "host", "gemini --acp"}, false},
	}
	s := New(Options{})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, s.Claims(c.command), "%q", c.command)
		})
	}
}

func TestArmAndRelease(t *testing.T) {
	w := newWorld(t)
	w.append(fixture(t, "turn1.jsonl"))
	before, err := os.ReadFile(w.path)
	require.NoError(t, err)

	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	m, err := New(Options{ConfigDir: w.config}).Arm(context.Background())
	require.NoError(t, err)
	assert.Empty(t, m.Env(), "nothing relocates Claude Code's config home")
	dir := privateDir(t, tmp)
	fi, err := os.Stat(dir)
	require.NoError(t, err)
	assert.True(t, fi.IsDir())
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())

	m.SessionOpened(sid, false)
	_, _, ok, err := turnUsage(t, m, 2*time.Second)
	require.NoError(t, err)
	require.True(t, ok)

	require.NoError(t, m.Release())
	_, err = os.Stat(dir)
	assert.True(t, os.IsNotExist(err), "the private directory is removed")
	require.NoError(t, m.Release(), "a second release is harmless")
	after, err := os.ReadFile(w.path)
	require.NoError(t, err)
	assert.Equal(t, before, after, "the transcript is only read")
}

// privateDir is the one directory Arm made under tmp.
func privateDir(t *testing.T, tmp string) string {
	t.Helper()
	entries, err := os.ReadDir(tmp)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	return filepath.Join(tmp, entries[0].Name())
}

func TestArmCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := New(Options{ConfigDir: t.TempDir()}).Arm(ctx)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestConfigHomeFromEnvironment(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	m, err := New(Options{}).Arm(context.Background())
	require.NoError(t, err)
	defer m.Release()
	assert.Equal(t, filepath.Join(home, ".claude", "projects"), m.(*measurement).projects)

	config := t.TempDir()
	t.Setenv("CLAUDE_CONFIG_DIR", config)
	m2, err := New(Options{}).Arm(context.Background())
	require.NoError(t, err)
	defer m2.Release()
	assert.Equal(t, filepath.Join(config, "projects"), m2.(*measurement).projects)

	m3, err := New(Options{ConfigDir: "/explicit"}).Arm(context.Background())
	require.NoError(t, err)
	defer m3.Release()
	assert.Equal(t, filepath.Join("/explicit", "projects"), m3.(*measurement).projects)
}

// TestTwoTurns: each turn reports its own figures; a message written more
// than once counts once, from its last write; a record lacking a counter
// and Claude Code's own messages do not count; the model is the turn's.
func TestTwoTurns(t *testing.T) {
	w := newWorld(t)
	m := w.arm(0)
	m.SessionOpened(sid, false)

	w.append(fixture(t, "turn1.jsonl"))
	u, model, ok, err := turnUsage(t, m, 2*time.Second)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, turn1, u)
	assert.Equal(t, "claude-test-1", model)

	w.append(fixture(t, "turn2.jsonl"))
	u, model, ok, err = turnUsage(t, m, 2*time.Second)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, turn2, u)
	assert.Equal(t, "claude-test-2", model)
}

// TestWaitsForTheTurnsLastRecords: the turn's last records arrive after
// TurnUsage was called, as Claude Code writes them some milliseconds after
// the prompt response.
func TestWaitsForTheTurnsLastRecords(t *testing.T) {
	w := newWorld(t)
	m := w.arm(time.Hour) // no settling on silence: only the final stop reason settles it
	m.SessionOpened(sid, false)
	lines := bytes.SplitAfter(fixture(t, "turn1.jsonl"), []byte("\n"))
	w.append(bytes.Join(lines[:6], nil)) // up to the tool result
	await := w.appending(bytes.Join(lines[6:], nil))
	u, model, ok, err := turnUsage(t, m, 5*time.Second)
	await()
	require.NoError(t, err)
	require.True(t, ok, "the final stop reason settles the turn")
	assert.Equal(t, turn1, u)
	assert.Equal(t, "claude-test-1", model)
}

// TestPartialTrailingLine: a last line without its newline is not read
// until it is complete.
func TestPartialTrailingLine(t *testing.T) {
	w := newWorld(t)
	m := w.arm(0)
	m.SessionOpened(sid, false)
	data := fixture(t, "turn1.jsonl")
	cut := len(data) - 40 // inside msg_B's record
	w.append(data[:cut])
	await := w.appending(data[cut:])
	u, _, ok, err := turnUsage(t, m, 5*time.Second)
	await()
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, turn1, u)
}

// TestTerminalRecordThenPartialLine: a final stop reason followed by a
// line still being written waits for the line (its figures belong to the
// turn), and a line that stays partial for the settle time is left out.
func TestTerminalRecordThenPartialLine(t *testing.T) {
	const late = `{"type":"assistant","message":{"id":"msg_late","model":"claude-test-1","stop_reason":"end_turn","usage":{"input_tokens":1,`
	const rest = `"output_tokens":2,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}}` + "\n"
	lateUsage := domain.Usage{InputTokens: 1, OutputTokens: 2, TotalTokens: 3}
	t.Run("waits for the line", func(t *testing.T) {
		w := newWorld(t)
		m := w.arm(time.Hour)
		m.SessionOpened(sid, false)
		w.append(fixture(t, "turn1.jsonl"))
		w.append([]byte(late))
		_, _, ok, err := turnNow(m)
		assert.False(t, ok, "a final stop reason before a partial line does not settle the turn")
		require.ErrorIs(t, err, errUnsettled, "the turn's records were read")
		w.append([]byte(rest))
		u, _, ok, err := turnUsage(t, m, 5*time.Second)
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, turn1.Add(lateUsage), u)
	})
	t.Run("left out once settled", func(t *testing.T) {
		w := newWorld(t)
		m := w.arm(50 * time.Millisecond)
		m.SessionOpened(sid, false)
		w.append(fixture(t, "turn1.jsonl"))
		w.append([]byte(late))
		u, _, ok, err := turnUsage(t, m, 5*time.Second)
		require.NoError(t, err)
		require.True(t, ok)
		assert.Equal(t, turn1, u)
	})
}

// TestContinuedSession: a session continued by another process counts
// only the turns after its opening.
func TestContinuedSession(t *testing.T) {
	w := newWorld(t)
	w.append(fixture(t, "turn1.jsonl"))
	m := w.arm(0)
	m.SessionOpened(sid, true)
	w.append(fixture(t, "turn2.jsonl"))
	u, model, ok, err := turnUsage(t, m, 2*time.Second)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, turn2, u)
	assert.Equal(t, "claude-test-2", model)
}

// TestContinuedSessionBeforeItsFirstTurn: nothing new since the opening,
// nothing counted (the earlier turns are not counted again).
func TestContinuedSessionBeforeItsFirstTurn(t *testing.T) {
	w := newWorld(t)
	w.append(fixture(t, "turn1.jsonl"))
	m := w.arm(0)
	m.SessionOpened(sid, true)
	_, _, ok, err := turnUsage(t, m, 150*time.Millisecond)
	require.NoError(t, err)
	assert.False(t, ok)
}

// TestUnsettledTurnIsNotCountedLater: a turn whose wait ended before its
// last record is unmeasured, and its records are not counted in the next
// turn.
func TestUnsettledTurnIsNotCountedLater(t *testing.T) {
	w := newWorld(t)
	m := w.arm(time.Minute) // no settling on silence here
	m.SessionOpened(sid, false)
	lines := bytes.SplitAfter(fixture(t, "turn1.jsonl"), []byte("\n"))
	w.append(bytes.Join(lines[:6], nil))
	_, _, ok, err := turnUsage(t, m, 100*time.Millisecond)
	assert.False(t, ok)
	assert.ErrorIs(t, err, errUnsettled)

	w.append(bytes.Join(lines[6:], nil)) // turn 1's late record
	w.append(fixture(t, "turn2.jsonl"))
	u, model, ok, err := turnUsage(t, m, 2*time.Second)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, turn2, u)
	assert.Equal(t, "claude-test-2", model)
}

// TestSettlesOnSilence: a turn without a final stop reason (cancelled)
// settles once the transcript stays unchanged for the settle time.
func TestSettlesOnSilence(t *testing.T) {
	w := newWorld(t)
	m := w.arm(80 * time.Millisecond)
	m.SessionOpened(sid, false)
	lines := bytes.SplitAfter(fixture(t, "turn1.jsonl"), []byte("\n"))
	w.append(bytes.Join(lines[:6], nil))
	_, _, ok, err := turnNow(m)
	assert.False(t, ok, "not settled before the settle time")
	require.ErrorIs(t, err, errUnsettled, "the turn's records were read")
	u, _, ok, err := turnUsage(t, m, 5*time.Second)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, domain.Usage{InputTokens: 100, OutputTokens: 12, CacheReadTokens: 20, CacheWriteTokens: 5, TotalTokens: 137}, u)
}

// TestNoCompleteRecord: a turn whose records lack a mapped counter, or are
// all Claude Code's own, has no figure.
func TestNoCompleteRecord(t *testing.T) {
	w := newWorld(t)
	var logs bytes.Buffer
	m := w.armLogged(time.Hour, &logs)
	m.SessionOpened(sid, false)
	w.append([]byte(strings.Join([]string{
		`{"type":"user","promptId":"prompt-1","message":{"role":"user","content":"hi"}}`,
		`{"type":"assistant","message":{"id":"msg_1","model":"claude-test-1","stop_reason":null,"usage":{"input_tokens":5,"output_tokens":1}}}`,
		`{"type":"assistant","message":{"id":"msg_2","model":"<synthetic>","stop_reason":"stop_sequence","usage":{"input_tokens":0,"output_tokens":0,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}}`,
		"",
	}, "\n")))
	_, _, ok, err := turnNow(m)
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Contains(t, logs.String(), "turn measured", "a final stop reason settles it without a figure")
	assert.NotContains(t, logs.String(), "turn unmeasured")
}

// TestNoTranscript: nothing appears within the wait.
func TestNoTranscript(t *testing.T) {
	w := newWorld(t)
	m := w.arm(0)
	m.SessionOpened(sid, false)
	_, _, ok, err := turnUsage(t, m, 100*time.Millisecond)
	require.NoError(t, err)
	assert.False(t, ok)
}

// TestTranscriptAppearsDuringTheWait: a new session's transcript may not
// exist before its first turn's records.
func TestTranscriptAppearsDuringTheWait(t *testing.T) {
	w := newWorld(t)
	m := w.arm(0)
	m.SessionOpened(sid, false)
	_, _, ok, err := turnNow(m)
	require.NoError(t, err)
	require.False(t, ok, "no transcript yet")
	await := w.appending(fixture(t, "turn1.jsonl"))
	u, _, ok, err := turnUsage(t, m, 5*time.Second)
	await()
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, turn1, u)
}

// TestLongWorkspaceFolder: the transcript is found in whatever project
// folder holds it (a long workspace path's folder carries a hash suffix).
func TestLongWorkspaceFolder(t *testing.T) {
	config := t.TempDir()
	folder := filepath.Join(config, "projects", strings.Repeat("-deep", 40)+"-1a2b3c")
	require.NoError(t, os.MkdirAll(folder, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(folder, sid+".jsonl"), fixture(t, "turn1.jsonl"), 0o644))
	m, err := New(Options{ConfigDir: config}).Arm(context.Background())
	require.NoError(t, err)
	defer m.Release()
	m.SessionOpened(sid, false)
	u, _, ok, err := turnUsage(t, m, 2*time.Second)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, turn1, u)
}

// TestUnusableSessionID: an id that cannot name a file is refused.
func TestUnusableSessionID(t *testing.T) {
	w := newWorld(t)
	m := w.arm(0)
	for _, id := range []string{"", "..", "../x", `a\b`} {
		_, _, ok, err := m.TurnUsage(context.Background(), id)
		assert.False(t, ok)
		assert.Error(t, err, "%q", id)
	}
}

// TestScanCountsAMessageOnce pins scan's rules on one stretch.
func TestScanCountsAMessageOnce(t *testing.T) {
	got := scan(fixture(t, "turn1.jsonl"), "", nil)
	assert.Equal(t, []string{"msg:msg_A", "msg:msg_B"}, got.keys)
	assert.True(t, got.terminal)
	assert.Equal(t, "prompt-1", got.lastPrompt)
	u, model := got.sum()
	assert.Equal(t, turn1, u)
	assert.Equal(t, "claude-test-1", model)

	// Messages counted before are not counted again.
	got = scan(fixture(t, "turn1.jsonl"), "", map[string]bool{"msg:msg_A": true})
	u, _ = got.sum()
	assert.Equal(t, domain.Usage{InputTokens: 130, OutputTokens: 4, CacheReadTokens: 125, TotalTokens: 259}, u)

	// Records of an earlier prompt are skipped.
	both := append(fixture(t, "turn1.jsonl"), fixture(t, "turn2.jsonl")...)
	got = scan(both, "", nil)
	assert.Equal(t, []string{"msg:msg_C"}, got.keys)
	assert.Equal(t, 3, got.leftovers)
	assert.Equal(t, "prompt-2", got.lastPrompt)
}
