package journaltail_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/internal/journaltail"
	"github.com/acpdrive/acpdrive/ports"
)

// opened records the Start a Spec's Open was given.
type opened struct {
	st  journaltail.Start
	err error
}

func (o *opened) open(st journaltail.Start) (ports.Measurement, error) {
	o.st = st
	if o.err != nil {
		return nil, o.err
	}
	return journaltail.Follow(func(home string) journaltail.Journal { return toy{dir: home} })(st)
}

func spec(o *opened) journaltail.Spec {
	return journaltail.Spec{
		Adapter: "toy_measure", Name: "toy_log", RuntimeName: "toy-cli",
		Package: "@acme/toy", Bins: []string{"toy"}, DirPrefix: "acpdrive-toy-",
		HomeEnv: "TOY_HOME", HomeSub: []string{".toy"},
		Settle: time.Second, Poll: time.Millisecond, Open: o.open,
	}
}

func TestSourceNames(t *testing.T) {
	s := journaltail.NewSource(spec(&opened{}), journaltail.Tuning{})
	assert.Equal(t, "toy_log", s.Name())
	assert.Equal(t, "toy-cli", s.RuntimeName())
	assert.True(t, s.Claims([]string{"npx", "@acme/toy@1"}))
	assert.True(t, s.Claims([]string{"/bin/toy"}))
	assert.False(t, s.Claims([]string{"other"}))
}

func TestSourceArm(t *testing.T) {
	user := t.TempDir()
	t.Setenv("HOME", user)
	t.Setenv("USERPROFILE", user)
	cases := []struct {
		name     string
		env      string
		tuning   journaltail.Tuning
		wantHome string
		settle   time.Duration
		poll     time.Duration
	}{
		{"defaults", "", journaltail.Tuning{}, filepath.Join(user, ".toy"), time.Second, time.Millisecond},
		{"the environment", "/srv/toy", journaltail.Tuning{}, "/srv/toy", time.Second, time.Millisecond},
		{"the tuning", "/srv/toy", journaltail.Tuning{Home: "/opt/toy", Settle: time.Hour, Poll: time.Minute}, "/opt/toy", time.Hour, time.Minute},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("TOY_HOME", c.env)
			c.tuning.TempDir = t.TempDir()
			var o opened
			s := journaltail.NewSource(spec(&o), c.tuning)
			m, err := s.Arm(context.Background())
			require.NoError(t, err)
			assert.Equal(t, c.wantHome, o.st.Home)
			assert.Equal(t, "toy_measure", o.st.Adapter)
			assert.Equal(t, c.settle, o.st.Settle)
			assert.Equal(t, c.poll, o.st.Poll)
			assert.NotNil(t, o.st.Log)
			assert.Equal(t, c.tuning.TempDir, filepath.Dir(o.st.Dir))
			fi, err := os.Stat(o.st.Dir)
			require.NoError(t, err)
			assert.True(t, fi.IsDir())
			require.NoError(t, m.Release())
			_, err = os.Stat(o.st.Dir)
			assert.ErrorIs(t, err, os.ErrNotExist)
		})
	}
}

// TestSourceArmFails: a done context arms nothing; a failing Open leaves
// no directory behind.
func TestSourceArmFails(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tmp := t.TempDir()
	s := journaltail.NewSource(spec(&opened{}), journaltail.Tuning{TempDir: tmp, Home: "/h"})
	_, err := s.Arm(ctx)
	assert.ErrorIs(t, err, context.Canceled)

	boom := errors.New("boom")
	o := opened{err: boom}
	s = journaltail.NewSource(spec(&o), journaltail.Tuning{TempDir: tmp, Home: "/h"})
	_, err = s.Arm(context.Background())
	assert.ErrorIs(t, err, boom)
	entries, err := os.ReadDir(tmp)
	require.NoError(t, err)
	assert.Empty(t, entries, "the private directory is removed")
}
