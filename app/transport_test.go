package app_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
)

// scriptSession starts a session on one of the shell-script agents in
// testdata.
func scriptSession(t *testing.T, script string, opts ...option) *harness {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join("testdata", script))
	require.NoError(t, err)
	o, rec, logs, _ := agentOptions(t, nil, opts...)
	o.Config.Command = []string{abs}
	sess, err := app.Start(context.Background(), o)
	require.NoError(t, err)
	h := &harness{t: t, sess: sess, rec: rec, logs: logs, opts: o}
	t.Cleanup(func() { h.stop() })
	return h
}

func TestPromptNotAcceptedInTime(t *testing.T) {
	h := scriptSession(t, "stops-reading.sh", withReadTimeout(300*time.Millisecond))
	began := time.Now()
	res := h.turn(strings.Repeat("x", 4<<20)) // far beyond any pipe buffer
	require.Equal(t, domain.OutcomeFailed, res.Outcome, res.Message())
	assert.Equal(t, domain.KindResponseTimeout, res.Err.Kind)
	assert.Equal(t, domain.MsgTimedOut, res.Err.Message)
	assert.Less(t, time.Since(began), 10*time.Second)
}

func TestPromptWriteFailsWithoutEndOfStream(t *testing.T) {
	h := scriptSession(t, "closes-stdin.sh", withReadTimeout(300*time.Millisecond))
	// Give the script time to close its input.
	time.Sleep(200 * time.Millisecond)
	res := h.turn(strings.Repeat("y", 1<<20))
	require.Equal(t, domain.OutcomeFailed, res.Outcome, res.Message())
	assert.Equal(t, domain.KindPortExit, res.Err.Kind)
	assert.Equal(t, domain.MsgPromptSendFailed, res.Err.Message)
}

func TestConnectionEndedWhileProcessAlive(t *testing.T) {
	abs, err := filepath.Abs(filepath.Join("testdata", "closes-stdout.sh"))
	require.NoError(t, err)
	o, rec, _, _ := agentOptions(t, nil)
	o.Config.Command = []string{abs}
	ae := startErr(t, o, rec)
	assert.Equal(t, domain.KindPortExit, ae.Kind)
	assert.Equal(t, domain.MsgConnEndedBeforeResponding, ae.Message)
}
