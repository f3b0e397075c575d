package app_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/refagent"
)

// onVersion drives the reference agent on protocol version v.
func onVersion(v int) option {
	return withConfig(func(s *domain.SessionSettings) { s.Protocol = versions[v].client })
}

// agentArgs adds the agent's --protocol of version v to args.
func agentArgs(v int, args ...string) []string {
	return append(args, "--protocol", versions[v].agent)
}

func childShape(evs []domain.Event) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, string(ev.Type)+":"+ev.Message)
	}
	return out
}

// TestChildFiguresAreNotTheParents: a child's usage_update is the child's
// (its context_usage event, Children()[i].Context), never the parent
// turn's context use or cost, on both versions.
func TestChildFiguresAreNotTheParents(t *testing.T) {
	t.Parallel()
	for v := range versions {
		t.Run(versions[v].name, func(t *testing.T) {
			t.Parallel()
			h := start(t, agentArgs(v), withSubagents(), onVersion(v))
			res := h.turn("#subagent-usage")
			require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
			usd := &domain.Cost{Amount: 0.3, Currency: "USD"}
			assert.Equal(t, &domain.ContextUsage{Used: 600, Size: 100000, Cost: usd}, res.Context, "the parent's own context use")
			assert.Equal(t, usd, res.Cost, "the parent's own cost")
			kids := h.sess.Children()
			require.Len(t, kids, 1)
			assert.Equal(t, &domain.ContextUsage{Used: 1200, Size: 200000, Cost: &domain.Cost{Amount: 2, Currency: "USD"}}, kids[0].Context)
			for _, ev := range h.rec.OfType(domain.EventContextUsage) {
				if ev.Context.Used == 1200 {
					assert.Equal(t, refagent.ChildSessionID, ev.SessionID)
				}
			}

			// The #subagent turn: the child's 1200 of 200000 is no context
			// use of the parent's.
			res = h.turn("#subagent")
			require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
			assert.Nil(t, res.Context, "the parent sent no usage_update in this turn")
			assert.Nil(t, res.Cost)
		})
	}
}

// TestChildReplayIsNotTheParents: what a continuation replays under a
// child's id is never the parent's text (with Subagents it is the child's,
// without it is dropped), on v1's session/load and v2's session/resume.
func TestChildReplayIsNotTheParents(t *testing.T) {
	t.Parallel()
	for v := range versions {
		for _, follow := range []bool{false, true} {
			name := versions[v].name + "/unfollowed"
			opts := []option{withResume("saved-1"), onVersion(v)}
			if follow {
				name = versions[v].name + "/subagents"
				opts = append(opts, withSubagents())
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				h := start(t, agentArgs(v, script(t, "load-child-replay.json")...), opts...)
				require.Contains(t, []string{"session/load", "session/resume"}, h.sess.Route(), "the continuation is confirmed")
				require.Equal(t, "saved-1", h.sess.ID())
				res := h.turn("next")
				require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
				var childText int
				for _, ev := range h.rec.All() {
					if strings.Contains(ev.Message, "Child replayed") {
						childText++
						assert.Equal(t, refagent.ChildSessionID, ev.SessionID, "%s is the child's", ev.Type)
						assert.Equal(t, "saved-1", ev.ParentSessionID)
					}
				}
				assert.NotContains(t, h.rec.Text(), "Child replayed", "no reply text of the parent's")
				assert.Contains(t, h.rec.Text(), "Parent again.")
				if follow {
					assert.Equal(t, 2, childText, "the child's chunk and message")
				} else {
					assert.Zero(t, childText)
				}
				if v == 1 {
					assert.Empty(t, h.rec.OfType(domain.EventMalformed))
				}
			})
		}
	}
}

// TestV2ChildSpeaksV2: a v2 child's own state_update and agent_message are
// read as its parent's are: its text is the child's message, its idle its
// child_state; nothing is malformed. Without Subagents nothing of the
// child shows and nothing is malformed either.
func TestV2ChildSpeaksV2(t *testing.T) {
	t.Parallel()
	h := start(t, agentArgs(1, script(t, "v2-child.json")...), withSubagents(), onVersion(1))
	res := h.turn("go")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.Empty(t, h.rec.OfType(domain.EventMalformed))
	assert.Equal(t, []string{
		"child_started:Explore the repository",
		"message_chunk:The child worked.",
		"notification:The child worked.",
		"child_state:idle (end_turn)",
	}, childShape(ofSession(h.rec.All(), refagent.ChildSessionID)))
	assert.Equal(t, "The parent is done.", h.sess.LastMessage().Text)
	assert.Equal(t, domain.ChildIdle, h.sess.Children()[0].State)

	h = start(t, agentArgs(1, script(t, "v2-child.json")...), onVersion(1))
	res = h.turn("go")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.Empty(t, h.rec.OfType(domain.EventMalformed))
	assert.Empty(t, ofSession(h.rec.All(), refagent.ChildSessionID))
	assert.NotContains(t, h.rec.Text(), "child worked")
	assert.Equal(t, "The parent is done.", h.sess.LastMessage().Text)
}

// TestV2ChildrenNotFollowed: on v2 children are part of the baseline, so
// without Subagents a subagent_update is dropped (Debug), not malformed,
// and none of the child's text is the parent's.
func TestV2ChildrenNotFollowed(t *testing.T) {
	t.Parallel()
	h := start(t, agentArgs(1), onVersion(1))
	res := h.turn("#subagent")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.Empty(t, h.rec.OfType(domain.EventMalformed), "subagent_update is baseline on v2")
	for _, ev := range h.rec.All() {
		assert.NotContains(t, ev.Message, "child looked")
		assert.Empty(t, ev.ParentSessionID)
	}
	assert.Empty(t, h.rec.OfType(domain.EventToolResult))
	assert.Nil(t, h.sess.Children())
	assert.Contains(t, h.logs.String(), "child sessions are not followed")

	// Followed on v2: the same events as on v1.
	h = start(t, agentArgs(1), withSubagents(), onVersion(1))
	require.Equal(t, domain.OutcomeCompleted, h.turn("#subagent").Outcome)
	assert.Equal(t, []string{
		"child_started:Explore the repository",
		"message_chunk:The child looked around.",
		"notification:The child looked around.",
		"tool_result:ls",
		"context_usage:1200 of 200000 context tokens (0.6%)",
		"child_state:idle (end_turn)",
	}, childShape(ofSession(h.rec.All(), refagent.ChildSessionID)))
	assert.Empty(t, h.rec.OfType(domain.EventMalformed))
}

// TestChildToolCallAcrossTurns: a child's tool call that starts in one
// parent turn and ends in the next is reported whole: its kind, its title
// and its duration from its start.
func TestChildToolCallAcrossTurns(t *testing.T) {
	t.Parallel()
	for v := range versions {
		t.Run(versions[v].name, func(t *testing.T) {
			t.Parallel()
			h := start(t, agentArgs(v), withSubagents(), onVersion(v))
			require.Equal(t, domain.OutcomeCompleted, h.turn("#subagent-background").Outcome)
			require.Equal(t, domain.OutcomeCompleted, h.turn("#subagent-background-end").Outcome)
			var results []domain.Event
			for _, ev := range ofSession(h.rec.All(), refagent.ChildSessionID) {
				if ev.Type == domain.EventToolResult {
					results = append(results, ev)
				}
			}
			require.Len(t, results, 1)
			assert.Equal(t, "execute", results[0].ToolName)
			assert.Equal(t, "sleep 5", results[0].ToolTitle)
			assert.GreaterOrEqual(t, results[0].ToolDurationMS, int64(20), "from its start in the earlier turn")
		})
	}
}

// TestChildTextBeforeItsIdle: a child's message is reported before the
// child_state that ends its work, not at the parent turn's end.
func TestChildTextBeforeItsIdle(t *testing.T) {
	t.Parallel()
	for v := range versions {
		t.Run(versions[v].name, func(t *testing.T) {
			t.Parallel()
			h := start(t, agentArgs(v), withSubagents(), onVersion(v))
			require.Equal(t, domain.OutcomeCompleted, h.turn("#subagent-last-text").Outcome)
			assert.Equal(t, []string{
				"child_started:Explore the repository",
				"message_chunk:The child reports back.",
				"notification:The child reports back.",
				"child_state:idle (end_turn)",
			}, childShape(ofSession(h.rec.All(), refagent.ChildSessionID)))
		})
	}
}
