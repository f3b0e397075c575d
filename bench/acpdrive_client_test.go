package bench

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/acpdrive/acpdrive/adapters/localexec"
	"github.com/acpdrive/acpdrive/adapters/sysclock"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
)

// acpdriveClient is acpdrive's session on one reference agent.
type acpdriveClient struct {
	sess *app.Session

	// Counted by OnEvent: the outcome event of the turn and, when
	// countEvents is set, the message_chunk events (one per chunk).
	completed   atomic.Bool
	notifEvents atomic.Int64
}

// startAcpdrive is the acpdrive starter. Chunks reach the sink through
// OnAgentText, the callback that hands over each chunk's text, like the
// SDK's SessionUpdate. With countEvents, OnEvent also counts the
// per-chunk message_chunk events (a cross-check, off in benchmarks).
func startAcpdrive(countEvents bool) starter {
	return func(ctx context.Context, s *sink) (burstClient, error) {
		c := &acpdriveClient{}
		cfg := domain.DefaultSessionSettings()
		cfg.Command = agentCommand()
		onEvent := func(ev domain.Event) {
			if ev.Type == domain.EventTurnCompleted {
				c.completed.Store(true)
			}
		}
		if countEvents {
			onEvent = func(ev domain.Event) {
				switch ev.Type {
				case domain.EventMessageChunk:
					c.notifEvents.Add(1)
				case domain.EventTurnCompleted:
					c.completed.Store(true)
				}
			}
		}
		sess, err := app.Start(ctx, app.Options{
			Settings:    cfg,
			Workspace:   workspace,
			Launcher:    localexec.New(localexec.Options{}),
			Clock:       sysclock.Clock{},
			OnEvent:     onEvent,
			OnAgentText: func(_, text string) { s.chunk(text) },
		})
		if err != nil {
			return nil, err
		}
		c.sess = sess
		return c, nil
	}
}

func (c *acpdriveClient) turn(ctx context.Context, prompt string) turnReport {
	t0 := time.Now()
	res := c.sess.Turn(ctx, prompt)
	end := time.Now()
	rep := turnReport{outcome: string(res.Outcome.Event()), elapsed: end.Sub(t0), sent: t0, end: end}
	if res.Err != nil {
		rep.err = res.Err
		if k, ok := domain.KindOf(res.Err); ok && k == domain.KindPortExit {
			rep.disconnected = true
		}
	}
	return rep
}

func (c *acpdriveClient) stop(ctx context.Context) error { return c.sess.Stop(ctx) }

func (c *acpdriveClient) pid() int { return c.sess.PID() }
