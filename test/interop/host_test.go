//go:build interop

package interop

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/eventrec"
	"github.com/acpdrive/acpdrive/internal/testsupport/proctest"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// TestHostTenSessionsShareOneProcess: on today's Claude and Codex adapters,
// ten sessions share one runtime process (docs/behaviour.md#runtime-host)
// and run two turns each concurrently; every fake reply names its session
// and turn, and each session's reply is its own. One session's Stop leaves
// the other nine running; killing the process ends the nine port_exit.
func TestHostTenSessionsShareOneProcess(t *testing.T) {
	t.Parallel()
	const n = 10
	for _, c := range currentRows() {
		t.Run(c.row, func(t *testing.T) {
			r, srv := c.rig(t, c.row)
			// The body of a later turn carries the earlier turns: later
			// markers are matched first.
			for k := 2; k >= 0; k-- {
				for i := range n {
					srv.Aside(fmt.Sprintf("question q%02d-%d", i, k),
						fakes.TextReply(fakes.Usage{Input: 100 + i, Output: 5 + k}, fmt.Sprintf("answer a%02d-%d", i, k)))
				}
			}
			o := r.options()
			h, err := app.NewHost(o, app.HostOptions{SessionsPerProcess: n})
			require.NoError(t, err)
			defer func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				assert.NoError(t, h.Close(ctx))
			}()
			sessions := make([]*app.Session, n)
			recs := make([]*eventrec.Recorder, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				recs[i] = &eventrec.Recorder{}
				so := o
				so.OnEvent = recs[i].Add
				wg.Add(1)
				go func() {
					defer wg.Done()
					ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
					defer cancel()
					sessions[i], errs[i] = h.Start(ctx, so)
				}()
			}
			wg.Wait()
			for _, err := range errs {
				require.NoError(t, err, r.logs.String())
			}
			pid := sessions[0].PID()
			for _, s := range sessions {
				require.Equal(t, pid, s.PID(), "one process")
			}
			agentIs(t, sessions[0], c.agent, c.version)
			turns := func(idx []int, k int) {
				var wg sync.WaitGroup
				for _, i := range idx {
					wg.Add(1)
					go func() {
						defer wg.Done()
						res := r.turn(sessions[i], fmt.Sprintf("question q%02d-%d", i, k))
						if assert.Equal(t, completed, outcomeOf(res), "session %d turn %d: %s", i, k, res.Message()) {
							assert.Equal(t, fmt.Sprintf("answer a%02d-%d", i, k), res.Reply, "session %d turn %d: its own reply", i, k)
						}
					}()
				}
				wg.Wait()
			}
			all := make([]int, n)
			for i := range all {
				all[i] = i
			}
			for k := range 2 {
				turns(all, k)
			}
			for i, rec := range recs {
				for _, ev := range rec.All() {
					if ev.SessionID != "" {
						assert.Equal(t, sessions[i].ID(), ev.SessionID, "no event of another session")
					}
				}
				for j := range n {
					if j != i {
						assert.NotContains(t, rec.Text(), fmt.Sprintf("a%02d-", j), "session %d shows no reply of session %d", i, j)
					}
				}
			}

			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			require.NoError(t, sessions[0].Stop(ctx))
			cancel()
			turns(all[1:], 2)

			require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
			for i := 1; i < n; i++ {
				res := r.turn(sessions[i], "after the kill")
				if assert.NotNil(t, res.Err, "session %d", i) {
					assert.Equal(t, domain.KindPortExit, res.Err.Kind, "session %d: %s", i, res.Err.Message)
				}
			}
			ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			require.NoError(t, h.Close(ctx))
			proctest.WaitGroupEmpty(t, pid, 5*time.Second)
		})
	}
}

// TestHostRefusesGemini: Gemini CLI advertises no session/close, so its
// sessions cannot share a process: the host refuses the start with the
// documented reason and leaves no process running; the session gets a
// process of its own through app.Start (docs/behaviour.md#runtime-host).
func TestHostRefusesGemini(t *testing.T) {
	t.Parallel()
	r, srv := geminiRig(t, true)
	srv.SetFallback(fakes.TextReply(fakes.Usage{Input: 100, Output: 5}, "own process"))
	o := r.options()
	h, err := app.NewHost(o, app.HostOptions{})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err = h.Start(ctx, o)
	var ae *domain.AgentError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, domain.KindAgentNotFound, ae.Kind)
	assert.Equal(t, domain.ReasonNotOffered, ae.Reason)
	assert.Equal(t, app.MsgHostNeedsClose, ae.Message)
	assert.Empty(t, h.Processes(), "the refused process is stopped")
	require.NoError(t, h.Close(ctx))

	sess := r.mustStart()
	agentIs(t, sess, "gemini-cli", "0.61.0")
	res := r.turn(sess, "hello")
	require.Equal(t, completed, outcomeOf(res), res.Message())
	assert.Equal(t, "own process", res.Reply)
}
