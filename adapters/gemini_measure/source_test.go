package gemini_measure

import (
	"context"
	"encoding/json"
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

const fixtureSession = "a1b2c3d4-0000-4000-8000-000000000001"

// Figures the fixtures hold (testdata/*.json, written from the format
// docs/runtimes.md and the real outfile show).
var (
	// turn1.json: the utility router's record and the main record.
	wantTurn1 = rawMeaning.Normalize(domain.Usage{InputTokens: 40 + 120, OutputTokens: 2 + 7, CacheReadTokens: 20, ReasoningTokens: 3, TotalTokens: 42 + 130})
	// turn2.json: two main records and a utility record under a fallback
	// prompt id; not the foreign session's nor the incomplete record.
	wantTurn2 = rawMeaning.Normalize(domain.Usage{InputTokens: 220 + 15 + 260, OutputTokens: 9 + 1 + 6, CacheReadTokens: 30, ReasoningTokens: 4 + 2, ToolUseTokens: 11, TotalTokens: 244 + 16 + 268})
	// journal.jsonl: the gemini messages after the last prompt.
	wantJournal = rawMeaning.Normalize(domain.Usage{InputTokens: 220 + 260, OutputTokens: 9 + 6, CacheReadTokens: 30, ReasoningTokens: 4 + 2, ToolUseTokens: 11, TotalTokens: 244 + 268})
)

func TestClaims(t *testing.T) {
	s := New(Options{})
	cases := []struct {
		name    string
		command []string
		want    bool
	}{
		{"bare program", []string{"gemini", "--acp"}, true},
		{"path to the bin link", []string{"/opt/tools/node_modules/.bin/gemini", "--acp", "-m", "gemini-2.5-pro"}, true},
		{"through env -i with assignments", []string{"env", "-i", "HOME=/tmp/h", "GEMINI_API_KEY=k", "/x/node_modules/.bin/gemini", "--acp"}, true},
		{"node running the package entry", []string{"node", "/x/node_modules/@google/gemini-cli/bundle/gemini.js", "--acp"}, true},
		{"npx with the package", []string{"npx", "-y", "@google/gemini-cli", "--acp"}, true},
		{"npx with a version", []string{"npx", "@google/gemini-cli@0.61.0", "--acp"}, true},
		{"a shell script argument", []string{"sh", "-c", "exec gemini --acp"}, true},
		{"windows shim", []string{`C:\npm\gemini.cmd`, "--acp"}, true},
		{"another runtime", []string{"claude-agent-acp"}, false},
		{"the model name only", []string{"some-agent", "-m", "gemini-2.5-pro"}, false},
		{"a wrapper named otherwise", []string{"/usr/local/bin/my-gemini-wrapper"}, false},
		{"the core package", []string{"node", "/x/node_modules/@google/gemini-cli-core/dist/index.js"}, false},
		{"an assignment naming gemini", []string{"env", "GEMINI_CLI_HOME=/srv/gemini", "codex-acp"}, false},
		{"gemini as a directory", []string{"/opt/gemini/bin/agent"}, false},
		{"empty", nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, s.Claims(c.command), "%q", c.command)
		})
	}
}

func TestNames(t *testing.T) {
	s := New(Options{})
	assert.Equal(t, "gemini_telemetry", s.Name())
	assert.Equal(t, "gemini-cli", s.RuntimeName())
	var _ ports.MeasurementSource = s
}

// armed arms a source with short waits and returns the measurement and
// its outfile.
func armed(t *testing.T, opts Options) (*measurement, string) {
	t.Helper()
	if opts.TempDir == "" {
		opts.TempDir = t.TempDir()
	}
	if opts.Settle == 0 {
		opts.Settle = 300 * time.Millisecond
	}
	if opts.Poll == 0 {
		opts.Poll = 10 * time.Millisecond
	}
	if opts.Home == "" {
		opts.Home = t.TempDir()
	}
	m, err := New(opts).Arm(context.Background())
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Release() })
	mm := m.(*measurement)
	return mm, mm.outfile
}

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return string(b)
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	_, err = f.WriteString(s)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func turnUsage(t *testing.T, m ports.Measurement, bound time.Duration) (domain.Usage, string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	u, model, ok, err := m.TurnUsage(ctx, fixtureSession)
	require.NoError(t, err)
	return u, model, ok
}

func TestArmEnvRelease(t *testing.T) {
	parent := t.TempDir()
	m, err := New(Options{TempDir: parent}).Arm(context.Background())
	require.NoError(t, err)
	mm := m.(*measurement)
	dir := filepath.Dir(mm.outfile)
	fi, err := os.Stat(dir)
	require.NoError(t, err)
	assert.True(t, fi.IsDir())
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	assert.Equal(t, parent, filepath.Dir(dir))
	assert.Equal(t, []string{
		"GEMINI_TELEMETRY_ENABLED=true",
		"GEMINI_TELEMETRY_TARGET=local",
		"GEMINI_TELEMETRY_OUTFILE=" + filepath.Join(dir, "telemetry.json"),
		"GEMINI_TELEMETRY_USE_COLLECTOR=false",
		"GEMINI_TELEMETRY_LOG_PROMPTS=false",
	}, m.Env())
	require.NoError(t, m.Release())
	_, err = os.Stat(dir)
	assert.True(t, os.IsNotExist(err))
	require.NoError(t, m.Release(), "a second release is a no-op")
}

// TestTwoTurns: two turns, each its own figure; the second's first record
// is written in two parts, the first part with the first turn.
func TestTwoTurns(t *testing.T) {
	m, out := armed(t, Options{})
	m.SessionOpened(fixtureSession, false)
	t1, t2 := fixture(t, "turn1.json"), fixture(t, "turn2.json")
	cut := len(t2) / 5 // inside the first object of turn 2
	appendFile(t, out, t1+t2[:cut])

	u, model, ok := turnUsage(t, m, 5*time.Second)
	require.True(t, ok)
	assert.Equal(t, wantTurn1, u)
	assert.Equal(t, "gemini-2.5-pro", model, "the main record's model, not the router's")

	appendFile(t, out, t2[cut:])
	u, model, ok = turnUsage(t, m, 5*time.Second)
	require.True(t, ok)
	assert.Equal(t, wantTurn2, u, "the second turn's own figures, not a running total")
	assert.Equal(t, "gemini-2.5-pro", model)
}

// TestCaughtUp: a log record that starts at or after where the wait
// began shows the outfile caught up (and ends the wait before the settle
// time); one written before does not.
func TestCaughtUp(t *testing.T) {
	cases := []struct {
		name     string
		before   string // written before the wait began
		after    string // written after
		caughtUp bool
	}{
		{"a record after the wait began", "", fixture(t, "turn1.json"), true},
		{"records before it only", fixture(t, "turn1.json"), "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, out := armed(t, Options{Settle: 20 * time.Second})
			m.SessionOpened(fixtureSession, false)
			appendFile(t, out, c.before)
			from := size(out)
			appendFile(t, out, c.after)
			m.mu.Lock()
			defer m.mu.Unlock()
			caughtUp, err := m.readOutfile(fixtureSession, from)
			require.NoError(t, err)
			assert.Equal(t, c.caughtUp, caughtUp)
			u, _, ok := m.takeTurn()
			require.True(t, ok, "the records were read either way")
			assert.Equal(t, wantTurn1, u)
		})
	}
}

// TestContinuedSession: records written before the session was opened are
// not counted.
func TestContinuedSession(t *testing.T) {
	m, out := armed(t, Options{})
	appendFile(t, out, fixture(t, "turn1.json"))
	m.SessionOpened(fixtureSession, true)
	appendFile(t, out, fixture(t, "turn2.json"))
	u, _, ok := turnUsage(t, m, 5*time.Second)
	require.True(t, ok)
	assert.Equal(t, wantTurn2, u)
}

// TestLateRecords: a turn's records that arrive after its wait ended are
// not counted in the next turn.
func TestLateRecords(t *testing.T) {
	m, out := armed(t, Options{})
	m.SessionOpened(fixtureSession, false)
	_, _, ok := turnUsage(t, m, 50*time.Millisecond)
	assert.False(t, ok, "nothing written yet, no journal")

	appendFile(t, out, fixture(t, "turn1.json")+fixture(t, "turn2.json"))
	u, _, ok := turnUsage(t, m, 5*time.Second)
	require.True(t, ok)
	assert.Equal(t, wantTurn2, u, "the newest prompt's records only")

	// More of turn 1's prompt arriving later is not counted again.
	appendFile(t, out, fixture(t, "turn1.json"))
	_, _, ok = turnUsage(t, m, 5*time.Second)
	assert.False(t, ok)
}

// TestNoCompleteRecord: a record without every counter does not count.
func TestNoCompleteRecord(t *testing.T) {
	m, out := armed(t, Options{})
	m.SessionOpened(fixtureSession, false)
	t2 := fixture(t, "turn2.json")
	// The third object of turn2.json is the incomplete one.
	objs := strings.SplitAfter(t2, "\n}\n")
	appendFile(t, out, objs[2])
	_, _, ok := turnUsage(t, m, 5*time.Second)
	assert.False(t, ok)
}

// TestGarbage: a value that does not parse is skipped.
func TestGarbage(t *testing.T) {
	m, out := armed(t, Options{})
	m.SessionOpened(fixtureSession, false)
	appendFile(t, out, "{\n  \"attributes\": {\"event.name\": oops}\n}\n"+fixture(t, "turn1.json"))
	u, _, ok := turnUsage(t, m, 5*time.Second)
	require.True(t, ok)
	assert.Equal(t, wantTurn1, u)
}

func writeJournal(t *testing.T, home, content string) string {
	t.Helper()
	p := filepath.Join(home, ".gemini", "tmp", "workspace", "chats", "session-2026-12-01T09-24-"+fixtureSession[:8]+".jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	return p
}

// TestJournalFallback: the outfile has not caught up within the bound;
// the journal's turn is read.
func TestJournalFallback(t *testing.T) {
	home := t.TempDir()
	writeJournal(t, home, fixture(t, "journal.jsonl"))
	// A journal of another session with the same first 8 characters.
	other := filepath.Join(home, ".gemini", "tmp", "other", "chats", "session-2026-12-01T09-25-"+fixtureSession[:8]+".jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(other), 0o755))
	require.NoError(t, os.WriteFile(other, []byte(`{"sessionId":"a1b2c3d4-ffff"}`+"\n"+
		`{"id":"x","type":"gemini","tokens":{"input":1,"output":1,"cached":0,"thoughts":0,"tool":0,"total":99999},"model":"m"}`+"\n"), 0o644))

	m, _ := armed(t, Options{Home: home, Settle: time.Minute})
	m.SessionOpened(fixtureSession, false)
	u, model, ok := turnUsage(t, m, 100*time.Millisecond)
	require.True(t, ok)
	assert.Equal(t, wantJournal, u)
	assert.Equal(t, "gemini-2.5-pro", model)
}

// TestLargerTotalWins: the outfile holds part of the turn when the bound
// ends; the journal's larger total wins, and a larger outfile figure (it
// counts utility calls the journal does not) wins over the journal.
func TestLargerTotalWins(t *testing.T) {
	t.Run("journal", func(t *testing.T) {
		home := t.TempDir()
		writeJournal(t, home, fixture(t, "journal.jsonl"))
		m, out := armed(t, Options{Home: home, Settle: time.Minute})
		m.SessionOpened(fixtureSession, false)
		objs := strings.SplitAfter(fixture(t, "turn2.json"), "\n}\n")
		appendFile(t, out, objs[0]) // the first main call only
		u, _, ok := turnUsage(t, m, 300*time.Millisecond)
		require.True(t, ok)
		assert.Equal(t, wantJournal, u)
	})
	t.Run("outfile", func(t *testing.T) {
		home := t.TempDir()
		writeJournal(t, home, fixture(t, "journal.jsonl"))
		m, out := armed(t, Options{Home: home, Settle: time.Minute})
		m.SessionOpened(fixtureSession, false)
		appendFile(t, out, fixture(t, "turn2.json"))
		u, _, ok := turnUsage(t, m, 300*time.Millisecond)
		require.True(t, ok)
		assert.Equal(t, wantTurn2, u)
	})
}

// TestJournalSet: a $set of the message list replaces what came before.
func TestJournalSet(t *testing.T) {
	home := t.TempDir()
	writeJournal(t, home, fixture(t, "journal.jsonl")+
		`{"$set":{"messages":[{"id":"m1","type":"user","content":[{"text":"say hello"}]},{"id":"m2","type":"gemini","tokens":{"input":120,"output":7,"cached":20,"thoughts":3,"tool":0,"total":130},"model":"gemini-2.5-pro"}]}}`+"\n")
	u, model, ok := readJournal(home, fixtureSession)
	require.True(t, ok)
	assert.Equal(t, rawMeaning.Normalize(domain.Usage{InputTokens: 120, OutputTokens: 7, CacheReadTokens: 20, ReasoningTokens: 3, TotalTokens: 130}), u)
	assert.Equal(t, "gemini-2.5-pro", model)
}

func TestReaderPartialTail(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.json")
	r := objectReader{path: p}
	var got []string
	collect := func(_ int64, raw []byte) { got = append(got, string(raw)) }
	require.NoError(t, r.read(func(s int64, raw json.RawMessage) { collect(s, raw) }), "a missing file reads as empty")
	appendFile(t, p, "{\n  \"a\": 1\n}\n{\n  \"b\": ")
	require.NoError(t, r.read(func(s int64, raw json.RawMessage) { collect(s, raw) }))
	assert.Equal(t, []string{"{\n  \"a\": 1\n}"}, got)
	appendFile(t, p, "2\n}\n")
	require.NoError(t, r.read(func(s int64, raw json.RawMessage) { collect(s, raw) }))
	assert.Equal(t, []string{"{\n  \"a\": 1\n}", "{\n  \"b\": 2\n}"}, got)
	require.NoError(t, r.read(func(s int64, raw json.RawMessage) { collect(s, raw) }))
	assert.Len(t, got, 2, "nothing read twice")
}

// rawMeaning converts the fixtures' raw figures into the one meaning the
// source reports (docs/behaviour.md#token-accounting).
var rawMeaning = domain.UsageMeaning{InputIncludesCache: true, OutputExcludesReasoning: true}
