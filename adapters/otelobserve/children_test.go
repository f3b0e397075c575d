package otelobserve_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"

	"github.com/acpdrive/acpdrive/adapters/localexec"
	"github.com/acpdrive/acpdrive/adapters/otelobserve"
	"github.com/acpdrive/acpdrive/adapters/sysclock"
	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
	"github.com/acpdrive/acpdrive/ports"
)

// TestChildSpans: with subagents followed, a child session is a span
// under the turn's span, named by its ids and labels, ended with its
// stop reason; the child's tool call is a span under the child's.
func TestChildSpans(t *testing.T) {
	tel := newTelemetry(t)
	obs, err := otelobserve.New(tel.tp, tel.mp)
	require.NoError(t, err)
	cfg := domain.DefaultSessionSettings()
	cfg.Command = []string{testbin.Path(t), "agent"}
	cfg.StallTimeout = 0
	cfg.Subagents = true
	ctx := context.Background()
	sess, err := app.Start(ctx, app.Options{
		Settings: cfg, Workspace: t.TempDir(), Launcher: localexec.New(localexec.Options{}),
		Clock: sysclock.Clock{}, Observers: []ports.Observer{obs},
	})
	require.NoError(t, err)
	res := sess.Turn(ctx, "#subagent")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	require.NoError(t, sess.Stop(ctx))

	tree := newTree(tel.spans.Ended())
	t.Logf("span tree:\n%s", tree.String())
	turn := tree.only(t, otelobserve.SpanTurn)
	child := tree.only(t, otelobserve.SpanChild)
	assert.Equal(t, turn.SpanContext().SpanID(), child.Parent().SpanID(), "the child is under the parent turn's span")
	attrs := attrMap(child.Attributes())
	assert.Equal(t, "child-1", attrs[otelobserve.AttrSessionID].AsString())
	assert.Equal(t, sess.ID(), attrs[otelobserve.AttrParentSessionID].AsString())
	assert.Equal(t, "Explore the repository", attrs[otelobserve.AttrChildTitle].AsString())
	assert.Equal(t, "general-purpose", attrs[otelobserve.AttrChildDescription].AsString())
	assert.Equal(t, "idle", attrs[otelobserve.AttrChildState].AsString())
	assert.Equal(t, "end_turn", attrs[otelobserve.AttrStopReason].AsString())
	assert.Equal(t, codes.Ok, child.Status().Code)
	tools := tree.children(child)
	require.Len(t, tools, 1)
	assert.Equal(t, otelobserve.SpanToolCall, tools[0].Name())
}
