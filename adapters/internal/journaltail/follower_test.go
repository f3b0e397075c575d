package journaltail_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/internal/journaltail"
	"github.com/acpdrive/acpdrive/domain"
)

// toy is a Journal: "<session>.log" under dir; "start" opens a turn, a
// number is a record of that many output tokens, "end" ends the turn.
type toy struct{ dir string }

func (j toy) Locate(sessionID string) (string, bool) {
	p := filepath.Join(j.dir, sessionID+".log")
	_, err := os.Stat(p)
	return p, err == nil
}

func (toy) Classify(line []byte) journaltail.Line {
	switch s := string(line); s {
	case "start":
		return journaltail.Line{Kind: journaltail.LineTurnStart}
	case "end":
		return journaltail.Line{Kind: journaltail.LineTurnEnd}
	default:
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return journaltail.Line{Kind: journaltail.LineCall, Usage: domain.Usage{OutputTokens: n}}
		}
	}
	return journaltail.Line{}
}

func newFollower(t *testing.T) (*journaltail.Follower, string, string) {
	t.Helper()
	journals := t.TempDir()
	dir, err := journaltail.PrivateDir("", "acpdrive-journaltail-test-")
	require.NoError(t, err)
	f := journaltail.NewFollower(toy{dir: journals}, journaltail.FollowerOptions{
		Name: "toy", Settle: time.Hour, Poll: time.Millisecond, Dir: dir,
	})
	t.Cleanup(func() { _ = f.Release() })
	return f, filepath.Join(journals, "s1.log"), dir
}

func within(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// TestFollowerTurns: each TurnUsage reports the turn that ended since
// the last one.
func TestFollowerTurns(t *testing.T) {
	f, path, _ := newFollower(t)
	assert.Nil(t, f.Env())
	f.SessionOpened("s1", false)
	appendTo(t, path, "start\n3\nend\n")
	u, _, ok, err := f.TurnUsage(within(t, 5*time.Second), "s1")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, domain.Usage{OutputTokens: 3}, u)
	appendTo(t, path, "start\n4\n5\nend\n")
	u, _, ok, err = f.TurnUsage(within(t, 5*time.Second), "s1")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, domain.Usage{OutputTokens: 9}, u)
}

// TestFollowerContinued: a continued session's past turns do not count.
func TestFollowerContinued(t *testing.T) {
	f, path, _ := newFollower(t)
	appendTo(t, path, "start\n100\nend\n")
	f.SessionOpened("s1", true)
	appendTo(t, path, "start\n1\nend\n")
	u, _, ok, err := f.TurnUsage(within(t, 5*time.Second), "s1")
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, domain.Usage{OutputTokens: 1}, u)
}

// TestFollowerRelease removes the private directory; a wait after it
// fails with ErrReleased, named by the source.
func TestFollowerRelease(t *testing.T) {
	f, _, dir := newFollower(t)
	f.SessionOpened("s1", false)
	require.NoError(t, f.Release())
	require.NoError(t, f.Release(), "a second Release")
	_, err := os.Stat(dir)
	assert.ErrorIs(t, err, os.ErrNotExist)
	_, _, ok, err := f.TurnUsage(within(t, time.Second), "s1")
	assert.False(t, ok)
	require.ErrorIs(t, err, journaltail.ErrReleased)
	assert.Contains(t, err.Error(), "toy: ")
}
