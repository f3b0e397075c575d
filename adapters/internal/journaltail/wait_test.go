package journaltail_test

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/internal/journaltail"
	"github.com/acpdrive/acpdrive/domain"
)

// book is a measurement over a toy journal: "start" opens a turn, a
// number is a record of that many input tokens, "end" ends the turn.
type book struct {
	mu          sync.Mutex
	tail        journaltail.Tail
	open, ended *journaltail.Figures
	released    bool
}

func (b *book) Poll() {
	b.tail.Read(func(_ int64, l []byte) {
		switch s := string(l); s {
		case "start":
			b.open, b.ended = &journaltail.Figures{}, nil
		case "end":
			if b.open != nil {
				b.ended, b.open = b.open, nil
			}
		default:
			n, err := strconv.ParseInt(s, 10, 64)
			if err == nil && b.open != nil {
				b.open.Usage = b.open.Usage.Add(domain.Usage{InputTokens: n, TotalTokens: n})
				b.open.Model = "m"
				b.open.Records++
			}
		}
	})
}

func (b *book) TakeEnded() (journaltail.Figures, bool) {
	f := b.ended
	if f == nil {
		return journaltail.Figures{}, false
	}
	b.ended = nil
	return *f, true
}

func (b *book) TakeOpen() (journaltail.Figures, bool) {
	f := b.open
	if f == nil || f.Records == 0 {
		return journaltail.Figures{}, false
	}
	b.open = nil
	return *f, true
}

func (b *book) Grew() time.Time { return b.tail.Grew }
func (b *book) Released() bool  { return b.released }

func newBook(t *testing.T) *book {
	b := &book{}
	b.tail.Reset()
	b.tail.Path = filepath.Join(t.TempDir(), "j.jsonl")
	return b
}

func (b *book) wait(t *testing.T, settle, within time.Duration) (domain.Usage, string, bool, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	b.mu.Lock()
	defer b.mu.Unlock()
	return journaltail.Wait(ctx, &b.mu, b, journaltail.Waiting{Settle: settle, Poll: time.Millisecond})
}

func TestWait(t *testing.T) {
	const long = time.Hour
	cases := []struct {
		name    string
		journal string
		settle  time.Duration
		within  time.Duration
		want    domain.Usage
		ok      bool
		err     error
	}{
		{"end read", "start\n3\n4\nend\n", long, 5 * time.Second, domain.Usage{InputTokens: 7, TotalTokens: 7}, true, nil},
		{"end without record", "start\nend\n", long, 5 * time.Second, domain.Usage{}, false, nil},
		{"settled", "start\n5\n", 20 * time.Millisecond, 5 * time.Second, domain.Usage{InputTokens: 5, TotalTokens: 5}, true, nil},
		{"wait ended with records", "start\n2\n", long, 50 * time.Millisecond, domain.Usage{InputTokens: 2, TotalTokens: 2}, true, nil},
		{"wait ended with none", "start\n", long, 50 * time.Millisecond, domain.Usage{}, false, context.DeadlineExceeded},
		{"partial end line", "start\n1\nen", long, 50 * time.Millisecond, domain.Usage{InputTokens: 1, TotalTokens: 1}, true, nil},
		{"no journal", "", 20 * time.Millisecond, 50 * time.Millisecond, domain.Usage{}, false, context.DeadlineExceeded},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newBook(t)
			if c.journal != "" {
				appendTo(t, b.tail.Path, c.journal)
			}
			u, model, ok, err := b.wait(t, c.settle, c.within)
			require.ErrorIs(t, err, c.err)
			assert.Equal(t, c.ok, ok)
			assert.Equal(t, c.want, u)
			if ok {
				assert.Equal(t, "m", model)
			}
		})
	}
}

// TestWaitSeesLaterLines: lines written while Wait sleeps are read, and
// the turn ends on its end line.
func TestWaitSeesLaterLines(t *testing.T) {
	b := newBook(t)
	appendTo(t, b.tail.Path, "start\n1\n")
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// Written under the lock: before Wait starts or while it sleeps.
		b.mu.Lock()
		appendTo(t, b.tail.Path, "2\nend\n")
		b.mu.Unlock()
	}()
	u, _, ok, err := b.wait(t, time.Hour, 10*time.Second)
	wg.Wait()
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, domain.Usage{InputTokens: 3, TotalTokens: 3}, u)
}

// TestWaitReleased: a release while Wait sleeps ends it with ErrReleased.
func TestWaitReleased(t *testing.T) {
	b := newBook(t)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		b.mu.Lock()
		b.released = true
		b.mu.Unlock()
	}()
	_, _, ok, err := b.wait(t, time.Hour, 10*time.Second)
	wg.Wait()
	assert.False(t, ok)
	assert.ErrorIs(t, err, journaltail.ErrReleased)
}

// TestWaitSettleRule: with a settle time, a quiet journal after a counted
// record ends the turn; with none, only the end record or the wait's end
// does. A wait whose context is already done polls once.
func TestWaitSettleRule(t *testing.T) {
	cases := []struct {
		name   string
		settle time.Duration
		how    string
	}{
		{"settle time", time.Minute, `how=settled`},
		{"no settle rule", 0, `how="wait ended"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newBook(t)
			appendTo(t, b.tail.Path, "start\n2\n")
			b.Poll()
			b.tail.Grew = time.Now().Add(-time.Hour) // quiet for an hour since
			var logs bytes.Buffer
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			b.mu.Lock()
			u, _, ok, err := journaltail.Wait(ctx, &b.mu, b, journaltail.Waiting{Settle: c.settle, Poll: time.Hour,
				Log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
			b.mu.Unlock()
			require.NoError(t, err)
			assert.True(t, ok)
			assert.Equal(t, domain.Usage{InputTokens: 2, TotalTokens: 2}, u)
			assert.Contains(t, logs.String(), c.how)
		})
	}
}
