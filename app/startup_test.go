package app_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/localexec"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/eventrec"
	"github.com/acpdrive/acpdrive/internal/testsupport/proctest"
)

// startErr starts a session expected to fail and returns its error; the
// start emitted exactly one startup_failed event with the same message.
func startErr(t *testing.T, o app.Options, rec *eventrec.Recorder) *domain.AgentError {
	t.Helper()
	sess, err := app.Start(context.Background(), o)
	require.Error(t, err)
	require.Nil(t, sess)
	var ae *domain.AgentError
	require.True(t, errors.As(err, &ae), "error %v is not an AgentError", err)
	failed := rec.OfType(domain.EventStartupFailed)
	require.Len(t, failed, 1)
	assert.Equal(t, ae.Message, failed[0].Message)
	return ae
}

func TestStartupErrors(t *testing.T) {
	t.Parallel()
	notDir := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(notDir, []byte("x"), 0o600))
	realLauncher := func(o *app.Options) { o.Launcher = localexec.New(localexec.Options{}) }
	cases := []struct {
		name    string
		args    []string
		mutate  func(*app.Options)
		kind    domain.ErrorKind
		message string // exact, or a prefix when it ends with "…"
	}{
		{"empty workspace", nil, func(o *app.Options) { o.Workspace = "" }, domain.KindInvalidWorkspaceCWD, domain.MsgEmptyWorkspace},
		{"workspace not UTF-8", nil, func(o *app.Options) { o.Workspace = "/ws-\xff" }, domain.KindInvalidWorkspaceCWD, domain.MsgWorkspaceNotUTF8},
		{"relative workspace", nil, func(o *app.Options) { o.Workspace = "some/dir" }, domain.KindInvalidWorkspaceCWD, "workspace path is not absolute"},
		{"missing workspace", nil, func(o *app.Options) { o.Workspace = "/nonexistent/acpdrive" }, domain.KindInvalidWorkspaceCWD, domain.MsgWorkspaceMissing},
		{"workspace is a file", nil, func(o *app.Options) { o.Workspace = notDir }, domain.KindInvalidWorkspaceCWD, domain.MsgWorkspaceNotDir},
		{"blank command", nil, func(o *app.Options) { o.Settings.Command = []string{"  "} }, domain.KindAgentNotFound, domain.MsgEmptyCommand},
		{"command not on PATH", nil, func(o *app.Options) {
			realLauncher(o)
			o.Settings.Command = []string{"acpdrive-no-such-runtime"}
		}, domain.KindAgentNotFound, `agent command "acpdrive-no-such-runtime" was not found on PATH`},
		{"wrong protocol version", []string{"--scenario", "wrong-version"}, nil, domain.KindAgentNotFound, "agent reported protocol version 2, want 1"},
		{"unsupported protocol version", []string{"--scenario", "unsupported-version"}, nil, domain.KindAgentNotFound, "agent does not support protocol version 1; it supports 2"},
		{"initialize error", []string{"--scenario", "init-error"}, nil, domain.KindResponseError, "initialize error -32603: …"},
		{"session/new error", []string{"--scenario", "auth-required"}, nil, domain.KindResponseError, "session/new error -32000: Authentication required"},
		{"session/new timeout", []string{"--scenario", "slow-new"}, func(o *app.Options) { o.Settings.ReadTimeout = 300 * time.Millisecond }, domain.KindResponseTimeout, domain.MsgTimedOut},
		{"exit before initialize", []string{"--scenario", "exit-before-init"}, nil, domain.KindPortExit, "the agent runtime exited before responding: exit status 7…"},
		{"exit before session/new", []string{"--scenario", "new-exit"}, nil, domain.KindPortExit, "the agent runtime exited before responding: exit status 1: fatal: cannot create a session (scenario new-exit)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o, rec, _, agentLg := agentOptions(t, c.args)
			if c.mutate != nil {
				c.mutate(&o)
			}
			ae := startErr(t, o, rec)
			assert.Equal(t, c.kind, ae.Kind, ae.Error())
			if prefix, ok := strings.CutSuffix(c.message, "…"); ok {
				assert.True(t, strings.HasPrefix(ae.Message, prefix), "message %q", ae.Message)
			} else {
				assert.Equal(t, c.message, ae.Message)
			}
			assert.True(t, errors.Is(ae, c.kind))
			if c.kind == domain.KindInvalidWorkspaceCWD || (c.kind == domain.KindAgentNotFound && len(c.args) == 0) {
				_, err := os.Stat(agentLg)
				assert.True(t, os.IsNotExist(err), "nothing was launched")
			}
		})
	}
}

func TestEarlyExitReportIsCleaned(t *testing.T) {
	t.Parallel()
	o, rec, _, _ := agentOptions(t, []string{"--scenario", "exit-before-init"})
	ae := startErr(t, o, rec)
	assert.NotContains(t, ae.Message, "\x1b", "ANSI escapes are stripped")
	assert.Contains(t, ae.Message, " | ", "stderr lines are joined")
}

// TestStartCancelledWhileWaitingForInitialize uses a real process: the
// cancelled start tears its process group down.
func TestStartCancelledWhileWaitingForInitialize(t *testing.T) {
	t.Parallel()
	o, rec, _, agentLg := procOptions(t, []string{"--scenario", "hang-init"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Cancel once the agent holds the initialize request.
		deadline := time.Now().Add(waitFor)
		for time.Now().Before(deadline) {
			if recs, err := readLogQuiet(agentLg); err == nil && len(recs) > 0 {
				break
			}
			time.Sleep(2 * time.Millisecond)
		}
		cancel()
	}()
	sess, err := app.Start(ctx, o)
	require.Nil(t, sess)
	require.ErrorIs(t, err, domain.KindTurnCancelled)
	var ae *domain.AgentError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "session start cancelled", ae.Message)
	require.Len(t, rec.OfType(domain.EventStartupFailed), 1)
	pid := rec.OfType(domain.EventStartupFailed)[0].AgentPID
	require.NotZero(t, pid)
	proctest.WaitGroupEmpty(t, pid, 3*time.Second)
	assert.Len(t, received(t, agentLg, "initialize"), 1)
}

func TestNoAgentInfoLowersAgentVersion(t *testing.T) {
	t.Parallel()
	h := start(t, []string{"--scenario", "no-agent-info"})
	assert.Equal(t, domain.CapGap, h.sess.Capabilities().State(domain.CapAgentVersion))
	h.turn("hi")
	assert.Contains(t, h.rec.Shape(),
		"notification:this session started with a declared capability gap in: token counts, session continuation, agent version")
}

func TestContinuationAdvertisedKeepsCapability(t *testing.T) {
	t.Parallel()
	h := start(t, []string{"--scenario", "resume"})
	caps := h.sess.Capabilities()
	assert.Equal(t, domain.CapProtocol, caps.State(domain.CapSessionContinuation))
	assert.Equal(t, []domain.CapabilityLabel{domain.CapTokenCounts}, caps.Gaps())
}

func TestUpdatesBeforeSessionIsKnown(t *testing.T) {
	t.Parallel()
	h := start(t, []string{"--scenario", "commands-after-new"})
	res := h.turn("hi")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.Empty(t, h.rec.OfType(domain.EventMalformed))
}

// TestRemoteSettingsWithALocalLauncherAreRefused: a library program that
// loads settings written for SSH hosts and passes the local launcher is
// refused before anything starts: the reference agent's process never
// runs (it would log its first line), and no startup_failed event goes
// out for a programmer's mistake.
func TestRemoteSettingsWithALocalLauncherAreRefused(t *testing.T) {
	t.Parallel()
	o, rec, _, agentLog := procOptions(t, nil)
	o.Settings.Hosts = []string{"build-7"}
	sess, err := app.Start(context.Background(), o)
	require.Nil(t, sess)
	var oe *app.OptionsError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, "Launcher", oe.Field)
	_, statErr := os.Stat(agentLog)
	assert.True(t, os.IsNotExist(statErr), "no runtime was started")
	assert.Empty(t, rec.OfType(domain.EventStartupFailed))
}

// TestVerificationOfASilentInitializeIsCredentialUnverified: a runtime
// process that never answers initialize ends the verification at its
// bound as credential_unverified, and the working session is never
// launched.
func TestVerificationOfASilentInitializeIsCredentialUnverified(t *testing.T) {
	t.Parallel()
	o, rec, _, agentLog := procOptions(t, []string{"--scenario", "hang-init"},
		withConfig(func(c *domain.SessionSettings) { c.VerificationBound = 800 * time.Millisecond }))
	o.VerifyCredential = true
	sess, err := app.Start(context.Background(), o)
	require.Nil(t, sess)
	require.ErrorIs(t, err, domain.KindCredentialUnverified)
	var ae *domain.AgentError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "the agent runtime did not complete a credential verification request: no answer within the verification bound of 800ms", ae.Message)
	require.Len(t, rec.OfType(domain.EventStartupFailed), 1)
	assert.Len(t, received(t, agentLog, "initialize"), 1, "one runtime, the verification's, received initialize")
}
