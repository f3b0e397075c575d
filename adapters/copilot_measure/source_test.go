package copilot_measure

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/acpdrive/acpdrive/adapters/internal/journaltail"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sessionID is the session id of the recorded journal in testdata
// (Copilot CLI 1.0.102 against the fake Chat Completions server: a turn
// with a bash call and two model calls, then a turn with one).
const sessionID = "3c9d2b1a-7e6f-4a5b-9c8d-1e2f3a4b5c6d"

// The figures the fake server sent, as the journal records them.
var (
	turn1 = rawMeaning.Normalize(domain.Usage{InputTokens: 230, OutputTokens: 21, CacheReadTokens: 70, ReasoningTokens: 6, TotalTokens: 251})
	turn2 = rawMeaning.Normalize(domain.Usage{InputTokens: 200, OutputTokens: 9, CacheReadTokens: 50, ReasoningTokens: 1, TotalTokens: 209})
)

func testdata(t *testing.T, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return raw
}

// journal is a session's journal under a fake state directory.
type journal struct {
	home, path string
}

func newJournal(t *testing.T) journal {
	home := t.TempDir()
	path := filepath.Join(home, "session-state", sessionID, "events.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	return journal{home: home, path: path}
}

func (j journal) append(t *testing.T, data []byte) {
	t.Helper()
	f, err := os.OpenFile(j.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	_, err = f.Write(data)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func arm(t *testing.T, home string) ports.Measurement {
	t.Helper()
	m, err := New(Options{StateDir: home, Settle: 50 * time.Millisecond}).Arm(context.Background())
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Release() })
	return m
}

func turnUsage(t *testing.T, m ports.Measurement, within time.Duration) (domain.Usage, string, bool, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	return m.TurnUsage(ctx, sessionID)
}

func TestClaims(t *testing.T) {
	s := New(Options{})
	cases := []struct {
		command []string
		want    bool
	}{
		{[]string{"copilot", "--acp"}, true},
		{[]string{"/opt/rt/copilot/node_modules/@github/copilot-linux-x64/copilot", "--acp"}, true},
		{[]string{"/opt/rt/copilot/node_modules/.bin/copilot", "--acp"}, true},
		{[]string{"npx", "@github/copilot@1.0.102", "--acp"}, true},
		{[]string{"npx", "@github/copilot", "--acp"}, true},
		{[]string{"node", "/x/node_modules/@github/copilot/npm-loader.js", "--acp"}, true},
		{[]string{`C:\tools\copilot.exe`, "--acp"}, true},
		{[]string{"copilot-linux-x64"}, false},
		{[]string{"npx", "@github/copilot-language-server"}, false},
		{[]string{"node", "/x/node_modules/@github/copilot-sdk/index.js"}, false},
		{[]string{"gh", "copilot"}, true},
		{[]string{"gemini", "--acp"}, false},
		{nil, false},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, s.Claims(c.command), "%q", c.command)
	}
}

func TestNames(t *testing.T) {
	s := New(Options{})
	assert.Equal(t, "copilot_events", s.Name())
	assert.Equal(t, "Copilot", s.RuntimeName())
}

func TestArmAndRelease(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	m, err := New(Options{StateDir: t.TempDir()}).Arm(context.Background())
	require.NoError(t, err)
	assert.Empty(t, m.Env())
	dir := privateDir(t, tmp)
	fi, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	require.NoError(t, m.Release())
	require.NoError(t, m.Release(), "twice is fine")
	_, err = os.Stat(dir)
	assert.True(t, errors.Is(err, os.ErrNotExist))
	_, _, _, err = m.TurnUsage(context.Background(), sessionID)
	assert.Error(t, err, "a released measurement answers nothing")
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
	_, err := New(Options{}).Arm(ctx)
	assert.ErrorIs(t, err, context.Canceled)
}

// TestTwoTurns: each turn reports its own records' sum, the second not a
// running total.
func TestTwoTurns(t *testing.T) {
	j := newJournal(t)
	m := arm(t, j.home)
	m.SessionOpened(sessionID, false)
	j.append(t, testdata(t, "turn1.jsonl"))
	u, model, ok, err := turnUsage(t, m, 5*time.Second)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, turn1, u)
	assert.Equal(t, "fake-copilot-model", model)

	j.append(t, testdata(t, "turn2.jsonl"))
	u, _, ok, err = turnUsage(t, m, 5*time.Second)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, turn2, u)
}

// TestPartialTrailingLine: a line without its newline is not read, even
// when it parses: the turn's turn end, cut short, does not end it.
func TestPartialTrailingLine(t *testing.T) {
	j := newJournal(t)
	var logs bytes.Buffer
	m, err := New(Options{StateDir: j.home, Settle: time.Hour,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}).Arm(context.Background())
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Release() })
	m.SessionOpened(sessionID, false)
	data := testdata(t, "turn2.jsonl")
	j.append(t, data[:len(data)-1]) // the last line, whole but for its newline
	// A wait whose context is already done reads the journal once.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	u, _, ok, err := m.TurnUsage(ctx, sessionID)
	require.NoError(t, err)
	require.True(t, ok, "the records before the last line were read")
	assert.Equal(t, turn2, u)
	assert.Contains(t, logs.String(), `how="wait ended"`, "the line without its newline did not end the turn")
	assert.NotContains(t, logs.String(), `how="end read"`)
}

// TestContinuedSession: the journal's earlier turns are not counted
// again.
func TestContinuedSession(t *testing.T) {
	j := newJournal(t)
	j.append(t, testdata(t, "turn1.jsonl"))
	m := arm(t, j.home)
	m.SessionOpened(sessionID, true)
	j.append(t, testdata(t, "turn2.jsonl"))
	u, _, ok, err := turnUsage(t, m, 5*time.Second)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, turn2, u)
}

// TestTurnEndWithoutRecord: a turn that ended with no complete record is
// answered ok false with no error.
func TestTurnEndWithoutRecord(t *testing.T) {
	j := newJournal(t)
	m := arm(t, j.home)
	m.SessionOpened(sessionID, false)
	j.append(t, []byte(`{"type":"user.message","data":{"content":"hi"}}`+"\n"+
		`{"type":"session.usage_record","data":{"usage":{"model":"m","inputTokens":5}}}`+"\n"+
		`{"type":"assistant.message","data":{"content":"hi","toolRequests":[]}}`+"\n"+
		`{"type":"assistant.turn_end","data":{"turnId":"0"}}`+"\n"))
	_, _, ok, err := turnUsage(t, m, 5*time.Second)
	require.NoError(t, err)
	assert.False(t, ok)
}

// TestToolRoundIsNotTheEnd: the turn_end of a round whose reply asked
// for a tool does not end the turn: the next round's record counts too.
func TestToolRoundIsNotTheEnd(t *testing.T) {
	j := newJournal(t)
	m := arm(t, j.home)
	m.SessionOpened(sessionID, false)
	data := testdata(t, "turn1.jsonl")
	lines := bytes.SplitAfter(data, []byte("\n"))
	var firstRound []byte
	for _, l := range lines {
		firstRound = append(firstRound, l...)
		if bytes.Contains(l, []byte(`"type":"assistant.turn_end"`)) {
			break
		}
	}
	j.append(t, firstRound)
	var book journaltail.Book
	for _, l := range bytes.Split(bytes.TrimSpace(firstRound), []byte("\n")) {
		book.Fold(events{}.Classify(l))
	}
	_, ended := book.TakeEnded()
	assert.False(t, ended, "a tool round does not end the turn")
	open, ok := book.TakeOpen()
	require.True(t, ok, "the tool round's turn is open")
	assert.Equal(t, 1, open.Records)
	j.append(t, data[len(firstRound):])
	u, _, ok, err := turnUsage(t, m, 5*time.Second)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, turn1, u)
}

// TestNoJournal: with nothing written the wait ends with the context's
// error.
func TestNoJournal(t *testing.T) {
	m := arm(t, t.TempDir())
	m.SessionOpened(sessionID, false)
	_, _, ok, err := turnUsage(t, m, 50*time.Millisecond)
	assert.False(t, ok)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
}

// TestTurnWithoutFinalReply: a turn that ends without a final reply (a
// refused tool call) is reported once the journal settles after its
// records.
func TestTurnWithoutFinalReply(t *testing.T) {
	j := newJournal(t)
	m := arm(t, j.home)
	m.SessionOpened(sessionID, false)
	j.append(t, []byte(`{"type":"user.message","data":{"content":"hi"}}`+"\n"+
		`{"type":"session.usage_record","data":{"usage":{"model":"m","inputTokens":5,"outputTokens":2,"cacheReadTokens":1,"cacheWriteTokens":0,"reasoningTokens":0}}}`+"\n"+
		`{"type":"assistant.message","data":{"content":"","toolRequests":[{"name":"bash"}]}}`+"\n"+
		`{"type":"assistant.turn_end","data":{"turnId":"0"}}`+"\n"))
	u, model, ok, err := turnUsage(t, m, 5*time.Second)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, rawMeaning.Normalize(domain.Usage{InputTokens: 5, OutputTokens: 2, CacheReadTokens: 1, TotalTokens: 7}), u)
	assert.Equal(t, "m", model)
}

// ExampleNew arms the source for a runtime whose HOME is known.
func ExampleNew() {
	src := New(Options{StateDir: os.TempDir()})
	fmt.Println(src.Name(), src.RuntimeName(), src.Claims([]string{"copilot", "--acp"}))
	// Output: copilot_events Copilot true
}

// rawMeaning converts the fixtures' raw figures into the one meaning the
// source reports (docs/behaviour.md#token-accounting).
var rawMeaning = domain.UsageMeaning{InputIncludesCache: true}
