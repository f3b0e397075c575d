package journaltail_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/acpdrive/acpdrive/adapters/internal/journaltail"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func appendTo(t *testing.T, path, data string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	_, err = f.WriteString(data)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func lines(tl *journaltail.Tail) []string {
	var got []string
	tl.Read(func(_ int64, l []byte) { got = append(got, string(l)) })
	return got
}

// TestTailReadsWholeLines: each read hands over the whole lines written
// since the last one, trimmed; a partial last line waits for its newline.
func TestTailReadsWholeLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	var tl journaltail.Tail
	tl.Reset()
	tl.Path = path
	appendTo(t, path, "{\"a\":1}\n  {\"b\":2} \r\n{\"c\"")
	assert.Equal(t, []string{`{"a":1}`, `{"b":2}`}, lines(&tl))
	assert.Equal(t, int64(len("{\"a\":1}\n  {\"b\":2} \r\n")), tl.Offset)
	assert.Empty(t, lines(&tl), "nothing new")
	appendTo(t, path, ":3}\n\n")
	assert.Equal(t, []string{`{"c":3}`, ""}, lines(&tl))
	grew := tl.Grew
	assert.Empty(t, lines(&tl))
	assert.Equal(t, grew, tl.Grew, "a read that finds no new line leaves the clock")
}

// TestTailSkip: a nil func moves past the lines without handing them over
// (a continued session's past).
func TestTailSkip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.jsonl")
	appendTo(t, path, "old\nold\n")
	tl := journaltail.Tail{Path: path}
	tl.Read(nil)
	assert.Equal(t, int64(8), tl.Offset)
	appendTo(t, path, "new\n")
	assert.Equal(t, []string{"new"}, lines(&tl))
}

// TestTailMissingJournal: a journal that does not exist reads nothing.
func TestTailMissingJournal(t *testing.T) {
	cases := []journaltail.Tail{
		{},
		{Path: filepath.Join(t.TempDir(), "absent.jsonl")},
	}
	for _, tl := range cases {
		assert.Empty(t, lines(&tl), "%q", tl.Path)
		assert.Zero(t, tl.Offset)
	}
}

// TestTailReset forgets the journal and restarts the clock.
func TestTailReset(t *testing.T) {
	tl := journaltail.Tail{Path: "x", Offset: 9}
	tl.Reset()
	assert.Empty(t, tl.Path)
	assert.Zero(t, tl.Offset)
	assert.False(t, tl.Grew.IsZero())
}
