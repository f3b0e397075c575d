package app_test

import (
	"bytes"
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// gatedLauncher wraps a launcher so that the first write to the runtime's
// standard input containing match blocks until release is closed; hit is
// closed when that write arrives. It holds the connection's reader inside
// the handling of one request, at the point where the answer is written.
type gatedLauncher struct {
	ports.Launcher
	match   []byte
	hit     chan struct{}
	release chan struct{}
}

func (l *gatedLauncher) Prepare(req ports.LaunchRequest) (ports.Plan, error) {
	p, err := l.Launcher.Prepare(req)
	if err != nil {
		return nil, err
	}
	return gatedPlan{p, l}, nil
}

type gatedPlan struct {
	ports.Plan
	l *gatedLauncher
}

func (p gatedPlan) Start(ctx context.Context, env []string) (ports.Process, error) {
	proc, err := p.Plan.Start(ctx, env)
	if err != nil {
		return nil, err
	}
	return gatedProcess{proc, &gatedStdin{WriteCloser: proc.Stdin(), l: p.l}}, nil
}

type gatedProcess struct {
	ports.Process
	stdin *gatedStdin
}

func (p gatedProcess) Stdin() io.WriteCloser { return p.stdin }

type gatedStdin struct {
	io.WriteCloser
	l    *gatedLauncher
	once sync.Once
}

func (w *gatedStdin) Write(b []byte) (int, error) {
	if bytes.Contains(b, w.l.match) {
		first := false
		w.once.Do(func() { first = true })
		if first {
			close(w.l.hit)
			<-w.l.release
		}
	}
	return w.WriteCloser.Write(b)
}

// TestHeldEndingOwnedWhenTheRequestIsRead: a person-needed request read
// between turns is held for the next turn even when that turn begins
// while the request's answer is still being written (here: held on its
// way to the runtime until the next turn has started). The next turn
// ends turn_input_required without sending its prompt
// (docs/behaviour.md#held-endings). Deterministic: the interleaving is
// forced, not hoped for.
func TestHeldEndingOwnedWhenTheRequestIsRead(t *testing.T) {
	t.Parallel()
	for _, v := range versions {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			heldEndingOwnedWhenTheRequestIsRead(t, v.client, v.agent)
		})
	}
}

func heldEndingOwnedWhenTheRequestIsRead(t *testing.T, client domain.ProtocolChoice, agent string) {
	gate := &gatedLauncher{match: []byte(`"outcome":"cancelled"`), hit: make(chan struct{}), release: make(chan struct{})}
	o, rec, logs, agentLog := agentOptions(t, []string{"--protocol", agent},
		withConfig(func(s *domain.SessionSettings) { s.Protocol = client }))
	gate.Launcher = o.Launcher
	o.Launcher = gate
	h := startWith(t, o, rec, logs, agentLog)
	t.Cleanup(func() {
		select {
		case <-gate.release:
		default:
			close(gate.release)
		}
	})

	res := h.turn("#between-turns")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	// The between-turns request was read and its answer is on its way.
	select {
	case <-gate.hit:
	case <-time.After(waitFor):
		t.Fatal("the between-turns request was not answered")
	}

	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	done := h.turnAsync(ctx, "this prompt is never sent")
	require.Eventually(t, func() bool { return len(rec.OfType(domain.EventSessionStarted)) == 2 },
		waitFor, time.Millisecond, "the second turn did not begin")
	close(gate.release)

	res = <-done
	require.Equal(t, domain.OutcomeInputRequired, res.Outcome, res.Message())
	assert.Equal(t, domain.MsgInputRequired+": a permission request offered no option to refuse", res.Err.Message)
	h.waitText("permission outcome: cancelled")
	assert.Equal(t, 1, len(received(t, agentLog, "session/prompt")), "the held ending sends no prompt")
	assert.Equal(t, 0, len(received(t, agentLog, "session/cancel")), "no prompt, nothing to cancel")
	shape := withoutKeepAlives(rec.Shape())
	second := shape[indexOf(shape, "turn_completed")+1:]
	assert.Equal(t, []string{
		"session_started:session started",
		`permission_decision:person execute "Push to origin" (preset refuse)`,
		"notification:" + domain.MsgPermissionUngrantable,
		"turn_input_required:" + res.Err.Message,
	}, without(second, "notification:An update between turns.", "notification:permission outcome: cancelled"))

	// Only that ending was held: the turn after runs normally.
	res = h.turn("now it is sent")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.Equal(t, 2, len(received(t, agentLog, "session/prompt")))
}

// without is list less every element in drop.
func without(list []string, drop ...string) []string {
	var out []string
	for _, s := range list {
		keep := true
		for _, d := range drop {
			keep = keep && s != d
		}
		if keep {
			out = append(out, s)
		}
	}
	return out
}
