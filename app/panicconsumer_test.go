package app_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
)

// TestPanickingConsumerDoesNotWedgeTheSession: an OnEvent that panics is
// the consumer's bug, not the session's end
// (docs/behaviour.md#the-librarys-own-contract): the panic is recovered and
// logged at Error, and the session stays usable — the reader goes on,
// later turns run, and a Stop without a deadline returns. Once on the
// reader (a message_chunk), once on the caller's goroutine
// (session_started, inside Turn).
func TestPanickingConsumerDoesNotWedgeTheSession(t *testing.T) {
	t.Parallel()
	for _, typ := range []domain.EventType{domain.EventSessionStarted, domain.EventMessageChunk} {
		t.Run(string(typ), func(t *testing.T) {
			t.Parallel()
			o, rec, logs, agentLog := agentOptions(t, nil)
			var panicked atomic.Bool
			o.OnEvent = func(ev domain.Event) {
				if ev.Type == typ && panicked.CompareAndSwap(false, true) {
					panic("a consumer's bug")
				}
				rec.Add(ev)
			}
			h := startWith(t, o, rec, logs, agentLog)

			res := turnRecovering(h, "first")
			require.True(t, panicked.Load(), "the consumer panicked")
			assert.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
			res = turnRecovering(h, "second")
			require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
			assert.Contains(t, rec.Text(), "second")

			stopped := make(chan error, 1)
			go func() { stopped <- h.sess.Stop(context.Background()) }()
			select {
			case err := <-stopped:
				require.NoError(t, err)
			case <-time.After(waitFor): // a wait for what must happen, not a bound under test
				t.Fatal("Stop without a deadline did not return")
			}
			assert.True(t, strings.Contains(logs.String(), `level=ERROR msg="an event consumer panicked"`), logs.String())
		})
	}
}

// turnRecovering runs a turn and turns a panic that escapes it into a
// failed result, so a test can go on to show what the panic left behind.
func turnRecovering(h *harness, prompt string) (res domain.TurnResult) {
	defer func() {
		if v := recover(); v != nil {
			res = domain.FailedResult(domain.NewError(domain.KindResponseError, "Turn panicked"))
		}
	}()
	return h.turn(prompt)
}
