package bench

import (
	"context"
	"testing"

	"github.com/acpdrive/acpdrive/adapters/localexec"
	"github.com/acpdrive/acpdrive/adapters/sysclock"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
)

// BenchmarkProtocolVersions streams the same burst of agent_message_chunk
// notifications through an ACP v1 session and an ACP v2 session
// (`acpdrive agent --protocol 2`, Settings.Protocol "2"), with the trivial
// handler, and reports both (BENCHMARKS.md, "ACP v1 vs v2"). On v2 the
// prompt is accepted at once and the turn ends at the idle state_update;
// every notification is looked at for its kind before the event stream
// takes it.
func BenchmarkProtocolVersions(b *testing.B) {
	b.Run("v1", func(b *testing.B) { benchBursts(b, startAcpdriveOn(domain.ProtocolV1, "1"), costTrivial) })
	b.Run("v2", func(b *testing.B) { benchBursts(b, startAcpdriveOn(domain.ProtocolV2, "2"), costTrivial) })
}

// startAcpdriveOn is startAcpdrive on one protocol version: the client
// asks for choice, the reference agent serves agentProtocol.
func startAcpdriveOn(choice domain.ProtocolChoice, agentProtocol string) starter {
	return func(ctx context.Context, s *sink) (burstClient, error) {
		c := &acpdriveClient{}
		cfg := domain.DefaultSessionSettings()
		cfg.Command = append(agentCommand(), "--protocol", agentProtocol)
		cfg.Protocol = choice
		sess, err := app.Start(ctx, app.Options{
			Settings:  cfg,
			Workspace: workspace,
			Launcher:  localexec.New(localexec.Options{}),
			Clock:     sysclock.Clock{},
			OnEvent: func(ev domain.Event) {
				if ev.Type == domain.EventTurnCompleted {
					c.completed.Store(true)
				}
			},
			OnAgentText: func(_, text string) { s.chunk(text) },
		})
		if err != nil {
			return nil, err
		}
		c.sess = sess
		return c, nil
	}
}
