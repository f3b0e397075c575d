package app_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/localexec"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/eventrec"
	"github.com/acpdrive/acpdrive/ports"
)

// TestHostRefusesSSHSettingsWithALocalLauncher: settings written for SSH
// hosts refuse a host whose launcher runs the runtime on this machine, as
// Start does; nothing runs locally without a word
// (docs/behaviour.md#runtime-host).
func TestHostRefusesSSHSettingsWithALocalLauncher(t *testing.T) {
	t.Parallel()
	o, _, _, agentLg := procOptions(t, []string{"--scenario", "multi-session"})
	o.Settings.Hosts = []string{"build-1"}
	h, err := app.NewHost(o, app.HostOptions{})
	require.NoError(t, err)
	defer func() { assert.NoError(t, h.Close(context.Background())) }()

	sess, err := h.Start(context.Background(), o)
	require.Error(t, err)
	assert.Nil(t, sess)
	var oe *app.OptionsError
	require.True(t, errors.As(err, &oe), "an *OptionsError, got %T: %v", err, err)
	assert.Equal(t, "Launcher", oe.Field)
	assert.Empty(t, h.Processes(), "no process runs")
	_, lerr := readLogQuiet(agentLg)
	assert.Error(t, lerr, "the runtime never started: it wrote no log")
}

// TestHostRefusesProcessOptionsOfAnotherScope: a session on a shared
// process cannot set what belongs to the process; each such option set to
// anything else than the host's is refused with an *OptionsError naming
// it, never silently overwritten or ignored, and a session that leaves
// them zero takes the host's (docs/behaviour.md#runtime-host).
func TestHostRefusesProcessOptionsOfAnotherScope(t *testing.T) {
	t.Parallel()
	o, _, _, _ := procOptions(t, []string{"--scenario", "multi-session"})
	h, err := app.NewHost(o, app.HostOptions{})
	require.NoError(t, err)
	defer func() { assert.NoError(t, h.Close(context.Background())) }()

	cases := []struct {
		field string
		set   func(*app.Options)
	}{
		{"Launcher", func(so *app.Options) { so.Launcher = localexec.New(localexec.Options{}) }},
		{"Settings.Command", func(so *app.Options) { so.Settings.Command = []string{"another-runtime", "--acp"} }},
		{"Settings.Protocol", func(so *app.Options) { so.Settings.Protocol = domain.ProtocolAuto }},
		{"Settings.Sandbox", func(so *app.Options) { so.Settings.Sandbox = domain.Sandbox{Enabled: true} }},
		{"Settings.Hosts", func(so *app.Options) { so.Settings.Hosts = []string{"build-1"} }},
		{"MeasurementSources", func(so *app.Options) { so.MeasurementSources = []ports.MeasurementSource{nil} }},
		{"VerifyCredential", func(so *app.Options) { so.VerifyCredential = true }},
		{"ClientName", func(so *app.Options) { so.ClientName = "another-client" }},
	}
	for _, tc := range cases {
		t.Run(tc.field, func(t *testing.T) {
			so := o
			so.Launcher = nil
			so.Settings.Command = nil
			tc.set(&so)
			sess, err := h.Start(context.Background(), so)
			require.Error(t, err)
			assert.Nil(t, sess)
			var oe *app.OptionsError
			require.True(t, errors.As(err, &oe), "an *OptionsError, got %T: %v", err, err)
			assert.Equal(t, tc.field, oe.Field)
		})
	}

	// Left zero, the process's options are the host's.
	so := o
	so.Launcher, so.Settings.Command = nil, nil
	sess, err := h.Start(context.Background(), so)
	require.NoError(t, err)
	res := sess.Turn(context.Background(), "hello")
	assert.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	require.NoError(t, sess.Stop(context.Background()))
}

// TestHostSlowConsumerStallsNoOtherSession: one session's consumer that
// sleeps in OnEvent stalls no other session on the same process: nine
// sessions run whole turns while it sleeps, and once it wakes its own turn
// completes with every event delivered in order
// (docs/behaviour.md#runtime-host).
func TestHostSlowConsumerStallsNoOtherSession(t *testing.T) {
	t.Parallel()
	const n = 10
	o, _, _, _ := procOptions(t, []string{"--scenario", "multi-session"})
	h, err := app.NewHost(o, app.HostOptions{SessionsPerProcess: n})
	require.NoError(t, err)
	defer func() { assert.NoError(t, h.Close(context.Background())) }()

	wake := make(chan struct{})
	wakeUp := sync.OnceFunc(func() { close(wake) })
	defer wakeUp() // before the host closes: a failure leaves no consumer asleep
	asleep := make(chan struct{})
	var once sync.Once
	slow := &eventrec.Recorder{}
	so := o
	so.OnEvent = func(ev domain.Event) {
		if ev.Type == domain.EventMessageChunk {
			once.Do(func() { close(asleep) })
			<-wake // the consumer sleeps on the reader's delivery of its first chunk
		}
		slow.Add(ev)
	}
	so.OnAgentText = nil
	sleeper, err := h.Start(context.Background(), so)
	require.NoError(t, err)
	others, recs := hostSessions(t, h, o, n-1)
	for _, s := range append(others, sleeper) {
		require.Equal(t, sleeper.PID(), s.PID(), "every session on one process")
	}

	prompt := strings.Repeat("a chunk of text ", 64) // 64 chunks of about 16 bytes
	sleeping := make(chan domain.TurnResult, 1)
	go func() { sleeping <- sleeper.Turn(context.Background(), prompt) }()
	<-asleep

	// A ceiling that only means "did not hang": before the outbox, the
	// shared reader slept with the consumer and no other turn ended.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	results := make([]domain.TurnResult, len(others))
	for i, s := range others {
		wg.Go(func() { results[i] = s.Turn(ctx, prompt) })
	}
	wg.Wait()
	for i, res := range results {
		require.Equal(t, domain.OutcomeCompleted, res.Outcome, "session %d: %s", i, res.Message())
		assert.Equal(t, prompt, recs[i].Text(), "session %d streamed its whole reply", i)
	}
	select {
	case res := <-sleeping:
		t.Fatalf("the sleeping session's turn ended while its consumer slept: %s", res.Message())
	default:
	}

	wakeUp()
	res := <-sleeping
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	chunks := slow.OfType(domain.EventMessageChunk)
	var text strings.Builder
	for _, ev := range chunks {
		text.WriteString(ev.Message)
	}
	assert.Equal(t, prompt, text.String(), "every chunk delivered, in order")
	evs := slow.All()
	require.NotEmpty(t, evs)
	assert.Equal(t, res.Event().Type, evs[len(evs)-1].Type, "the outcome event is the last, delivered before Turn returned")
}

// TestHostSlowConsumerPastItsBacklog: a session whose consumer falls more
// than HostOptions.EventBacklog deliveries behind has its running turn
// ended turn_outcome_unknown (session/cancel sent) and the rest of that
// turn's events dropped, while another session on the process streams
// on; once its consumer caught up, its next turn is whole again
// (docs/behaviour.md#runtime-host).
func TestHostSlowConsumerPastItsBacklog(t *testing.T) {
	t.Parallel()
	o, _, _, agentLg := procOptions(t, []string{"--scenario", "multi-session"})
	// A backlog that the sleeping session's 64 chunks overflow and the
	// other session's short turn does not: a consumer on its own goroutine
	// may lag the reader by a burst even when it is quick.
	h, err := app.NewHost(o, app.HostOptions{EventBacklog: 32})
	require.NoError(t, err)
	defer func() { assert.NoError(t, h.Close(context.Background())) }()

	wake := make(chan struct{})
	wakeUp := sync.OnceFunc(func() { close(wake) })
	defer wakeUp()
	var once sync.Once
	slow := &eventrec.Recorder{}
	so := o
	so.OnEvent = func(ev domain.Event) {
		if ev.Type == domain.EventMessageChunk {
			once.Do(func() { <-wake })
		}
		slow.Add(ev)
	}
	so.OnAgentText = nil
	sleeper, err := h.Start(context.Background(), so)
	require.NoError(t, err)
	others, recs := hostSessions(t, h, o, 1)

	prompt := strings.Repeat("a chunk of text ", 64)
	sleeping := make(chan domain.TurnResult, 1)
	go func() { sleeping <- sleeper.Turn(context.Background(), prompt) }()
	require.Eventually(t, func() bool { return len(received(t, agentLg, "session/cancel")) == 1 }, waitFor, 5*time.Millisecond,
		"the turn of the session past its backlog is cancelled")

	res := others[0].Turn(context.Background(), "streaming on")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.Equal(t, "streaming on", recs[0].Text(), "the other session streams on")

	wakeUp()
	res = <-sleeping
	require.NotNil(t, res.Err, res.Message())
	assert.Equal(t, domain.KindTurnOutcomeUnknown, res.Err.Kind)
	assert.Contains(t, res.Err.Message, "HostOptions.EventBacklog")
	chunks := len(slow.OfType(domain.EventMessageChunk))
	assert.Less(t, chunks, 64, "the rest of the turn was dropped")
	assert.Equal(t, res.Event().Type, slow.All()[len(slow.All())-1].Type, "the outcome event is delivered")

	slow.Reset()
	res = sleeper.Turn(context.Background(), "whole again")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	var text strings.Builder
	for _, ev := range slow.OfType(domain.EventMessageChunk) {
		text.WriteString(ev.Message)
	}
	assert.Equal(t, "whole again", text.String())
}
