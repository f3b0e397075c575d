//go:build interop

package interop

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// steerMarker is the steer's text, found again in the fake model's requests.
const steerMarker = "STEER-7f3a: stop and commit what you have"

// TestCurrentReleasesSteer: on today's Claude adapter and codex-acp, a
// steer sent while the model streams reaches the model within the same
// turn (a later model call of that turn carries its text), the stream
// shows steered, and the turn ends normally (docs/behaviour.md#steering).
func TestCurrentReleasesSteer(t *testing.T) {
	t.Parallel()
	for _, c := range currentRows() {
		t.Run(c.row, func(t *testing.T) {
			r, srv := c.rig(t, c.row)
			hold := make(chan struct{})
			released := false
			release := func() {
				if !released {
					released = true
					close(hold)
				}
			}
			defer release()
			srv.Script(
				fakes.Reply{Text: []string{"Working on it ", "and going on."}, Hold: hold, Usage: c.usage[0]},
				fakes.TextReply(c.usage[1], "Committed ", "what I had."),
			)
			srv.SetFallback(fakes.TextReply(c.usage[1], "Done."))
			sess := r.mustStart()
			require.True(t, sess.AgentInfo().Advertised.Steering, "%s advertises steering", c.row)

			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			done := make(chan domain.TurnResult, 1)
			go func() { done <- sess.Turn(ctx, "work on the task") }()
			require.Eventually(t, func() bool {
				for _, ev := range r.rec.OfType(domain.EventMessageChunk) {
					if strings.Contains(ev.Message, "Working on it") {
						return true
					}
				}
				return false
			},
				time.Minute, 10*time.Millisecond, "the model streams its first chunk")
			require.NoError(t, sess.Steer(ctx, steerMarker))
			release()
			res := <-done
			require.Equal(t, completed, outcomeOf(res), res.Message())

			calls := srv.ModelCalls()
			carried := -1
			for i, call := range calls {
				t.Logf("%s model call %d: %.200s", c.row, i, lastUserText(call))
				if carried < 0 && call.BodyContains("STEER-7f3a") {
					carried = i
				}
			}
			require.GreaterOrEqual(t, carried, 1, "a model call after the first carries the steer")
			steered := r.rec.OfType(domain.EventSteered)
			require.Len(t, steered, 1)
			assert.Equal(t, steerMarker, steered[0].Message)
			assert.Contains(t, r.wire.methodsOut(), "_session/steering")
		})
	}
}
