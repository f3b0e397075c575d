package netserve

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/internal/netwire"
)

// fill adds n messages of about size bytes each to j, a live follower
// taking them as they come (so the runtime never waits), then ends the
// runtime's output.
func fill(t *testing.T, j *journal, n, size int) {
	t.Helper()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		j.follow(context.Background(), 0, func(int64, []byte) error { return nil }, func() error { return nil })
	}()
	pad := strings.Repeat("x", size)
	for i := range n {
		require.NoError(t, j.add(fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"m","params":{"i":%d,"pad":%q}}`, i, pad)))
		if i%7 == 0 {
			j.publish()
		}
	}
	j.end()
	wg.Wait()
}

// collect follows j from from to its end, returning each message's
// sequence and cursor.
func collect(t *testing.T, j *journal, from int64) (seqs []int64, all bool) {
	t.Helper()
	all = j.follow(context.Background(), from, func(seq int64, msg []byte) error {
		require.Equal(t, strconv.FormatInt(seq, 10), netwire.Cursor(msg), "a message carries its own cursor")
		require.Contains(t, string(msg), fmt.Sprintf(`"i":%d,`, seq))
		seqs = append(seqs, seq)
		return nil
	}, func() error { return nil })
	return seqs, all
}

func journalFiles(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "journal-*"))
	require.NoError(t, err)
	return names
}

func span(from, to int64) []int64 {
	var s []int64
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

// TestJournalOnDisk: with a journal on disk, a resume after a cursor
// older than the messages held in memory gets every message after it,
// in order, each once; without one, it is refused.
func TestJournalOnDisk(t *testing.T) {
	const n = 3000
	for name, tc := range map[string]struct {
		disk   bool
		cursor string
		from   int64
	}{
		"from the first":     {true, "-1", 0},
		"from the middle":    {true, "1233", 1234},
		"from a mark":        {true, strconv.Itoa(2*markEvery - 1), 2 * markEvery},
		"in memory":          {true, strconv.Itoa(n - 2), n - 1},
		"no journal on disk": {false, "-1", -1},
	} {
		t.Run(name, func(t *testing.T) {
			o := Options{Retention: 4, Logger: slog.New(slog.DiscardHandler)}
			dir := t.TempDir()
			if tc.disk {
				o.JournalDir, o.JournalBytes = dir, DefaultJournalBytes
			}
			j := newJournal(o)
			defer j.close()
			fill(t, j, n, 900) // about 2.7 MB: reads from disk in several runs
			from, ok := j.after(tc.cursor)
			if tc.from < 0 {
				assert.False(t, ok, "refused: no longer held")
				return
			}
			require.True(t, ok)
			require.Equal(t, tc.from, from)
			seqs, all := collect(t, j, from)
			assert.True(t, all)
			assert.Equal(t, span(tc.from, n), seqs, "none lost, none twice")
		})
	}
}

// TestJournalOnDiskLargeRecords: records longer than a read buffer are
// skipped and read whole.
func TestJournalOnDiskLargeRecords(t *testing.T) {
	const n = 40
	j := newJournal(Options{Retention: 4, Logger: slog.New(slog.DiscardHandler), JournalDir: t.TempDir(), JournalBytes: DefaultJournalBytes})
	defer j.close()
	fill(t, j, n, 70<<10)
	from, ok := j.after("19")
	require.True(t, ok)
	seqs, all := collect(t, j, from)
	assert.True(t, all)
	assert.Equal(t, span(20, n), seqs)
}

// TestJournalOnDiskBound: past JournalBytes the oldest segment is removed
// whole; what is kept is at least the latest half of the bound, the
// files never exceed the bound (but for one message), and a resume from
// before what is kept is refused.
func TestJournalOnDiskBound(t *testing.T) {
	const n, size, bound = 2000, 1000, 64 << 10
	dir := t.TempDir()
	j := newJournal(Options{Retention: 4, Logger: slog.New(slog.DiscardHandler), JournalDir: dir, JournalBytes: bound})
	defer j.close()
	fill(t, j, n, size)

	j.mu.Lock()
	require.True(t, j.disk.flush())
	j.mu.Unlock()
	files := journalFiles(t, dir)
	require.Len(t, files, 2, "two segments")
	total := int64(0)
	for _, f := range files {
		fi, err := os.Stat(f)
		require.NoError(t, err)
		total += fi.Size()
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	}
	assert.LessOrEqual(t, total, int64(bound))
	assert.Greater(t, total, int64(bound/2-size-100), "the latest half of the bound is kept, at least (but for a message)")

	oldest := j.oldest()
	assert.Greater(t, (n-oldest)*int64(size), int64(bound/2)-2*size)
	_, ok := j.after("-1")
	assert.False(t, ok, "the first message is no longer held")
	_, ok = j.after(strconv.FormatInt(oldest-2, 10))
	assert.False(t, ok, "the message before the oldest is no longer held")
	from, ok := j.after(strconv.FormatInt(oldest-1, 10))
	require.True(t, ok)
	seqs, all := collect(t, j, from)
	assert.True(t, all)
	assert.Equal(t, span(oldest, n), seqs)
}

// TestJournalOnDiskFails: a journal whose directory is gone keeps going
// from memory alone: the runtime never waits on the disk.
func TestJournalOnDiskFails(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gone")
	j := newJournal(Options{Retention: 4, Logger: slog.New(slog.DiscardHandler), JournalDir: dir})
	defer j.close()
	fill(t, j, 100, 10)
	_, ok := j.after("-1")
	assert.False(t, ok)
	from, ok := j.after("97")
	require.True(t, ok)
	seqs, _ := collect(t, j, from)
	assert.Equal(t, []int64{98, 99}, seqs)
}

// TestWebSocketResumeFromDisk: a WebSocket connection resumed from its
// first message after more than Retention messages gets them all from
// its journal on disk (files 0600), which is removed once the connection
// ends.
func TestWebSocketResumeFromDisk(t *testing.T) {
	dir := t.TempDir()
	s, l := serveWith(t, Options{Listen: "http://127.0.0.1:0", Retention: 2, AbandonAfter: time.Hour, JournalDir: dir})
	ws := "ws" + strings.TrimPrefix(s.URL(), "http")
	ctx := context.Background()
	c, resp, err := websocket.Dial(ctx, ws, nil)
	require.NoError(t, err)
	defer c.CloseNow()
	conn := resp.Header.Get(netwire.HeaderConnection)
	const n = 50
	for i := range n {
		require.NoError(t, c.Write(ctx, websocket.MessageText, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"m%d"}`, i, i)))
		_, msg, err := c.Read(ctx)
		require.NoError(t, err)
		require.Equal(t, strconv.Itoa(i), netwire.Cursor(msg))
	}
	files := journalFiles(t, dir)
	require.Len(t, files, 1)
	fi, err := os.Stat(files[0])
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	_ = c.CloseNow()

	h := http.Header{}
	h.Set(netwire.HeaderConnection, conn)
	c2, _, err := websocket.Dial(ctx, ws, &websocket.DialOptions{HTTPHeader: h})
	require.NoError(t, err)
	defer c2.CloseNow()
	require.NoError(t, c2.Write(ctx, websocket.MessageText, netwire.ResumeRequest("")))
	_, answer, err := c2.Read(ctx)
	require.NoError(t, err)
	assert.Equal(t, `{"jsonrpc":"2.0","id":"acpdrive-resume","result":{"received":50}}`, string(answer))
	for i := range n {
		_, msg, err := c2.Read(ctx)
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"_meta":{"acp/cursor":"%d"},"echo":"m%d"}}`, i, i, i), string(msg))
	}
	require.NoError(t, c2.Close(websocket.StatusNormalClosure, ""))
	assert.Eventually(t, func() bool { return l.killed.Load() == 1 }, 5*time.Second, 10*time.Millisecond)
	assert.Eventually(t, func() bool { return len(journalFiles(t, dir)) == 0 }, 5*time.Second, 10*time.Millisecond,
		"the journal on disk is removed with its connection")
}

// TestStreamableHTTPResumeFromDisk: an event stream reopened with a
// Last-Event-ID older than the events in memory gets the rest from the
// journal on disk; without one, 409.
func TestStreamableHTTPResumeFromDisk(t *testing.T) {
	for name, disk := range map[string]bool{"on disk": true, "memory only": false} {
		t.Run(name, func(t *testing.T) {
			o := Options{Listen: "http://127.0.0.1:0", Retention: 2}
			if disk {
				o.JournalDir = t.TempDir()
			}
			s, _ := serveWith(t, o)
			do := func(method, conn, last, body string) *http.Response {
				t.Helper()
				req, err := http.NewRequest(method, s.URL(), strings.NewReader(body))
				require.NoError(t, err)
				if conn != "" {
					req.Header.Set(netwire.HeaderConnection, conn)
				}
				if last != "" {
					req.Header.Set(netwire.HeaderLastEventID, last)
				}
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				return resp
			}
			resp := do(http.MethodPost, "", "", `{"jsonrpc":"2.0","id":0,"method":"initialize"}`)
			_ = resp.Body.Close()
			conn := resp.Header.Get(netwire.HeaderConnection)
			require.NotEmpty(t, conn)
			defer func() { _ = do(http.MethodDelete, conn, "", "").Body.Close() }()
			stream := do(http.MethodGet, conn, "", "")
			br := bufio.NewReader(stream.Body)
			const n = 30
			for i := range n {
				resp := do(http.MethodPost, conn, "", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"m%d"}`, i+1, i))
				_ = resp.Body.Close()
				require.Equal(t, http.StatusAccepted, resp.StatusCode)
				ev, err := netwire.ReadEvent(br)
				require.NoError(t, err)
				require.Equal(t, strconv.Itoa(i), ev.ID)
			}
			_ = stream.Body.Close()

			again := do(http.MethodGet, conn, "0", "")
			defer again.Body.Close()
			if !disk {
				assert.Equal(t, http.StatusConflict, again.StatusCode)
				return
			}
			require.Equal(t, http.StatusOK, again.StatusCode)
			br = bufio.NewReader(again.Body)
			for i := 1; i < n; i++ {
				ev, err := netwire.ReadEvent(br)
				require.NoError(t, err)
				assert.Equal(t, strconv.Itoa(i), ev.ID)
				assert.Equal(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"_meta":{"acp/cursor":"%d"},"echo":"m%d"}}`, i+1, i, i), string(ev.Data))
			}
		})
	}
}
