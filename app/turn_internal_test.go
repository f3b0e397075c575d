package app

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/fakeclock"
)

// countingPrompter is a prompter with no wire: the prompt is taken at
// once, a cancel answers it, and every call of broken — one per wake of
// the turn loop's select — is counted.
type countingPrompter struct {
	sent      chan struct{}
	sentOnce  sync.Once
	brokenCh  chan struct{}
	brokenHit atomic.Int64
	call      *countingCall
}

func newCountingPrompter() *countingPrompter {
	return &countingPrompter{sent: make(chan struct{}), brokenCh: make(chan struct{}), call: &countingCall{done: make(chan struct{})}}
}

func (p *countingPrompter) send(context.Context, promptRequest) (promptCall, error) {
	p.sentOnce.Do(func() { close(p.sent) })
	return p.call, nil
}

func (p *countingPrompter) cancel(context.Context, string) error { p.call.finish(); return nil }

func (p *countingPrompter) classify(err error) (domain.TurnResult, bool) {
	return domain.FailedResult(domain.WrapError(domain.KindPortExit, "send failed", err)), false
}

func (p *countingPrompter) lostConnection(error) domain.TurnResult {
	return domain.FailedResult(domain.NewError(domain.KindPortExit, "lost"))
}

func (p *countingPrompter) broken() <-chan struct{} { p.brokenHit.Add(1); return p.brokenCh }
func (p *countingPrompter) writeErr() error         { return errors.New("a write missed its bound") }
func (p *countingPrompter) done() <-chan struct{}   { return nil }

type countingCall struct {
	once sync.Once
	done chan struct{}
}

func (c *countingCall) finish()               { c.once.Do(func() { close(c.done) }) }
func (c *countingCall) Done() <-chan struct{} { return c.done }
func (c *countingCall) result() domain.TurnResult {
	return domain.TurnResult{Outcome: domain.OutcomeCompleted}
}
func (c *countingCall) settled() {}
func (c *countingCall) forget()  {}
func (c *countingCall) Answered() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// TestLostClaimWaitsWithoutSpinning: when a person-needed ending is
// claimed first (its notice still on its way) and then the caller cancels
// or the write side breaks, the turn loop waits for the claimed ending's
// signal instead of waking again and again on a context or a channel that
// stays done. Structural: the loop's wakes are counted (every wake reads
// broken), not timed.
func TestLostClaimWaitsWithoutSpinning(t *testing.T) {
	t.Parallel()
	for _, tc := range []string{"cancel", "broken stream"} {
		t.Run(tc, func(t *testing.T) {
			t.Parallel()
			e := newTurnEngine(fakeclock.New(streamEpoch), slog.New(slog.NewTextHandler(io.Discard, nil)))
			turn, _, _, ok := e.begin()
			require.True(t, ok)
			p := newCountingPrompter()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			res := make(chan domain.TurnResult, 1)
			go func() { res <- e.run(ctx, turn, p, turnBounds{read: time.Hour}, promptRequest{sessionID: "s-1"}) }()
			<-p.sent

			person := ending{override: domain.OverrideInputRequired, notice: domain.MsgPermissionUngrantable,
				err: domain.Disposition("", domain.OverrideInputRequired, "").Err}
			require.True(t, turn.claim(person))
			if tc == "cancel" {
				cancel()
			} else {
				close(p.brokenCh)
			}
			// Give a spinning loop ample room to show itself; a waiting
			// one does not wake at all. Nothing is asserted on time.
			for i := 0; i < 200 && p.brokenHit.Load() < 100; i++ {
				time.Sleep(time.Millisecond)
			}
			wakes := p.brokenHit.Load()
			turn.signal()
			got := <-res
			assert.Equal(t, domain.OutcomeInputRequired, got.Outcome, got.Message())
			assert.LessOrEqual(t, wakes, int64(2), "the loop woke %d times before the claimed ending's signal", wakes)
			e.finish()
		})
	}
}

// TestVerificationBoundText: the verification-timeout message writes its
// bound as the contract does (docs/behaviour.md#credential-verification).
func TestVerificationBoundText(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		domain.MaxVerificationBound: "60s",
		90 * time.Second:            "90s",
		700 * time.Millisecond:      "700ms",
		1500 * time.Millisecond:     "1.5s",
	} {
		assert.Equal(t, want, boundText(d), "%v", d)
	}
}

// TestFailedStartStopBoundIsTheDocumented: a start that did not become the
// session is torn down within stop_grace + 5 s, as docs/behaviour.md#bounds
// says (it was stop_grace + 10 s).
func TestFailedStartStopBoundIsTheDocumented(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "behaviour.md"))
	require.NoError(t, err)
	require.Contains(t, strings.Join(strings.Fields(string(doc)), " "), "the library stops a failed start with `stop_grace + 5 s`")
	assert.Equal(t, 5*time.Second, failedStartStopMargin)
}
