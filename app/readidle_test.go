package app_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
)

// TestOnReadIdleFollowsTheBatch: once the reader has handled everything
// the runtime sent (here a whole burst and the turn's answer), it calls
// OnReadIdle before it waits for more, with every chunk already handed
// to OnAgentText.
func TestOnReadIdleFollowsTheBatch(t *testing.T) {
	t.Parallel()
	var chunks, seen atomic.Int64
	idled := make(chan struct{}, 1)
	h := start(t, nil, func(o *app.Options) {
		text := o.OnAgentText
		o.OnAgentText = func(id, s string) {
			chunks.Add(1)
			text(id, s)
		}
		o.OnReadIdle = func() {
			seen.Store(chunks.Load())
			select {
			case idled <- struct{}{}:
			default:
			}
		}
	})
	res := h.turn("#burst 1000")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	deadline := time.After(10 * time.Second)
	for seen.Load() != 1000 {
		select {
		case <-idled:
		case <-deadline:
			t.Fatalf("OnReadIdle saw at most %d of 1000 chunks handled", seen.Load())
		}
	}
}
