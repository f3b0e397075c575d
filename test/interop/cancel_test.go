//go:build interop

package interop

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// TestCancelClaudeCodex: a turn cancelled while its model call streams,
// on both generations of the Claude and Codex adapters. acpdrive sends
// session/cancel, the turn is turn_cancelled, the runtime answers the
// prompt "cancelled" and calls the model no more (cancelMidTurn); the
// streamed start of the reply is a message, never a notice, and the
// cancelled turn has no figure.
func TestCancelClaudeCodex(t *testing.T) {
	t.Parallel()
	rows := []struct {
		row string
		rig func(t testing.TB, row string) (*rig, *fakes.Server)
	}{
		{"claude", claudeRigOf},
		{"claude-current", claudeRigOf},
		{"codex", codexRigOf},
		{"codex-current", codexRigOf},
	}
	for _, c := range rows {
		t.Run(c.row, func(t *testing.T) {
			r, srv := c.rig(t, c.row)
			cancelMidTurn(t, r, srv)
			assert.Empty(t, r.rec.OfType(domain.EventTokenUsage), "a cancelled turn has no figure")
			for _, ev := range r.rec.OfType(domain.EventRuntimeNotice) {
				assert.NotContains(t, ev.Message, "Working on it", "the reply is no notice")
			}
			var streamed string
			for _, ev := range r.rec.OfType(domain.EventMessageChunk) {
				streamed += ev.Message
			}
			assert.Contains(t, streamed, "Working on it", "the streamed start of the reply is message_chunk")
		})
	}
}
