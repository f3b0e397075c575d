package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/app"
	"github.com/acpdrive/acpdrive/domain"
)

const gapNotice = "notification:this session started with a declared capability gap in: token counts, session continuation"

func TestEchoTurnsOnOneProcess(t *testing.T) {
	h := start(t, nil)
	pid, id := h.sess.PID(), h.sess.ID()
	require.NotZero(t, pid)
	require.Equal(t, "ref-1", id)

	res := h.turn("hello from the first turn")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.Equal(t, "end_turn", res.StopReason)
	assert.Nil(t, res.Err)
	assert.Equal(t, []string{
		"session_started:session started",
		gapNotice,
		"notification*",
		"notification:hello from the first turn",
		"turn_completed",
	}, h.rec.Shape())
	assert.Equal(t, "hello from the first turn", h.rec.Text())
	started := h.rec.OfType(domain.EventSessionStarted)[0]
	assert.Equal(t, id, started.SessionID)
	assert.Equal(t, pid, started.AgentPID)
	for _, ev := range h.rec.All() {
		assert.Equal(t, time.UTC, ev.Time.Location())
		assert.Equal(t, pid, ev.AgentPID)
	}

	h.rec.Reset()
	res = h.turn("second")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	// The capability notice is once per session.
	assert.Equal(t, []string{"session_started:session started", "notification*", "notification:second", "turn_completed"}, h.rec.Shape())
	assert.Equal(t, pid, h.sess.PID())
	assert.Len(t, received(t, h.agentLg, "session/prompt"), 2)
	assert.Len(t, received(t, h.agentLg, "session/new"), 1)
	assert.Equal(t, "second", h.sess.LastMessage().Text)
}

func TestMessagesSplitByMessageID(t *testing.T) {
	h := start(t, nil)
	res := h.turn("#two-messages")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	var reported []string
	for _, ev := range h.rec.OfType(domain.EventNotification) {
		if ev.Message != "" && !strings.HasPrefix(ev.Message, "this session") {
			reported = append(reported, ev.Message)
		}
	}
	assert.Len(t, reported, 2, "two messageIds make two reported messages: %q", reported)
}

func TestLongMessageCappedAt500Runes(t *testing.T) {
	h := start(t, nil)
	res := h.turn("#long-message")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	var long string
	for _, ev := range h.rec.OfType(domain.EventNotification) {
		if len(ev.Message) > len(long) {
			long = ev.Message
		}
	}
	assert.Equal(t, 500, len([]rune(long)))
	assert.True(t, strings.HasSuffix(long, "…"))
}

func TestToolCallsOfEveryKind(t *testing.T) {
	h := start(t, nil)
	res := h.turn("#tools")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	results := h.rec.OfType(domain.EventToolResult)
	require.Len(t, results, 11)
	want := []string{"read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other", "other"}
	for i, ev := range results {
		assert.Equal(t, want[i], ev.ToolName, "call %d", i+1)
		assert.Equal(t, want[i] == "execute", ev.ToolError, "call %d", i+1)
		assert.GreaterOrEqual(t, ev.ToolDurationMS, int64(0))
	}
	assert.Equal(t, "execute failed: exit status 1", results[5].Message)
	assert.Equal(t, "read finished", results[0].Message)
}

func TestToolUpdateWithoutToolCall(t *testing.T) {
	h := start(t, nil)
	res := h.turn("#unannounced-tool")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	results := h.rec.OfType(domain.EventToolResult)
	require.NotEmpty(t, results)
}

func TestUpdatesMapping(t *testing.T) {
	h := start(t, nil)
	res := h.turn("#updates")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	shape := h.rec.Shape()
	assert.Contains(t, shape, "other_message:reasoning block")
	assert.Contains(t, shape, "other_message:plan update")
	assert.Contains(t, shape, "malformed:received a session update of an unrecognized kind")
	assert.Contains(t, shape, "malformed:agent sent a message chunk this client does not render")
	for _, ev := range h.rec.All() {
		assert.NotContains(t, ev.Message, "other session", "an update for another session must be dropped")
	}
	assert.Contains(t, h.logs.String(), "dropped an update for another session")
}

func TestStopReasons(t *testing.T) {
	cases := []struct {
		prompt  string
		outcome domain.Outcome
		event   string
		kind    domain.ErrorKind
		message string
	}{
		{"#stop-end_turn", domain.OutcomeCompleted, "turn_completed", "", ""},
		{"#stop-refusal", domain.OutcomeFailed, "turn_failed", domain.KindTurnRefused, domain.MsgStopRefusal},
		{"#stop-max_tokens", domain.OutcomeFailed, "turn_failed", domain.KindTurnTokenLimit, domain.MsgStopMaxTokens},
		{"#stop-max_turn_requests", domain.OutcomeFailed, "turn_failed", domain.KindTurnRequestLimit, domain.MsgStopMaxTurnRequests},
		{"#stop-cancelled", domain.OutcomeFailed, "turn_failed", domain.KindTurnFailed, domain.MsgUnaskedCancel},
		{"#stop-unknown", domain.OutcomeFailed, "turn_failed", domain.KindTurnOutcomeUnknown, `agent reported an unrecognized stop reason: "paused"`},
		{"#prompt-error", domain.OutcomeFailed, "turn_ended_with_error", domain.KindResponseError, ""},
		{"#bad-result", domain.OutcomeFailed, "turn_ended_with_error", domain.KindTurnOutcomeUnknown, domain.MsgPromptUndecodable},
	}
	h := start(t, nil)
	for _, c := range cases {
		t.Run(c.prompt, func(t *testing.T) {
			h.rec.Reset()
			res := h.turn(c.prompt)
			assert.Equal(t, c.outcome, res.Outcome)
			shape := h.rec.Shape()
			last := shape[len(shape)-1]
			assert.True(t, strings.HasPrefix(last, c.event), "last event %q", last)
			if c.kind == "" {
				assert.Nil(t, res.Err)
				return
			}
			require.NotNil(t, res.Err)
			assert.Equal(t, c.kind, res.Err.Kind)
			if c.message != "" {
				assert.Equal(t, c.message, res.Err.Message)
			} else {
				assert.True(t, strings.HasPrefix(res.Err.Message, "session/prompt error "), res.Err.Message)
			}
		})
	}
}

func TestPermissionRefusedTurnGoesOn(t *testing.T) {
	h := start(t, nil)
	res := h.turn("#permission-refusable")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.Contains(t, h.rec.Shape(), "notification:"+domain.MsgPermissionRefused)
	answers := received(t, h.agentLg, "session/request_permission")
	require.Len(t, answers, 1)
	var msg struct {
		Result struct {
			Outcome struct {
				Outcome  string `json:"outcome"`
				OptionID string `json:"optionId"`
			} `json:"outcome"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(answers[0].Message, &msg))
	assert.Equal(t, "selected", msg.Result.Outcome.Outcome)
	assert.Equal(t, "reject-once", msg.Result.Outcome.OptionID)
	// The agent reports the outcome it received as a chunk.
	assert.Contains(t, h.rec.Text(), "permission outcome: selected reject-once")
}

func TestPermissionWithoutRefusalNeedsPerson(t *testing.T) {
	h := start(t, nil)
	res := h.turn("#permission-no-reject")
	require.Equal(t, domain.OutcomeInputRequired, res.Outcome, res.Message())
	require.NotNil(t, res.Err)
	assert.Equal(t, domain.KindTurnInputRequired, res.Err.Kind)
	assert.True(t, strings.HasPrefix(res.Err.Message, domain.MsgInputRequired), res.Err.Message)
	assert.False(t, res.Err.Kind.Retryable())
	shape := h.rec.Shape()
	assert.Contains(t, shape, "notification:"+domain.MsgPermissionUngrantable)
	assert.True(t, strings.HasPrefix(shape[len(shape)-1], "turn_input_required"))
	answers := received(t, h.agentLg, "session/request_permission")
	require.Len(t, answers, 1)
	assert.Contains(t, string(answers[0].Message), `"outcome":"cancelled"`)
	assert.Len(t, received(t, h.agentLg, "session/cancel"), 1, "session/cancel is sent once")
}

func TestElicitationNeedsPerson(t *testing.T) {
	h := start(t, nil)
	res := h.turn("#elicitation")
	require.Equal(t, domain.OutcomeInputRequired, res.Outcome, res.Message())
	assert.Contains(t, h.rec.Shape(), "notification:"+domain.MsgElicitation)
	answers := received(t, h.agentLg, "elicitation/create")
	require.Len(t, answers, 1)
	assert.Contains(t, string(answers[0].Message), `"code":-32601`)
}

func TestUnimplementedClientMethod(t *testing.T) {
	h := start(t, nil)
	res := h.turn("#fs-call")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.Contains(t, h.rec.Shape(), "malformed:"+domain.MsgUnimplementedMethod)
	answers := received(t, h.agentLg, "fs/read_text_file")
	require.Len(t, answers, 1)
	assert.Contains(t, string(answers[0].Message), `"code":-32601`)
}

func TestBetweenTurnsEndingIsHeld(t *testing.T) {
	h := start(t, nil)
	res := h.turn("#between-turns")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	// Wait until the between-turns permission request was answered.
	require.Eventually(t, func() bool {
		return len(received(t, h.agentLg, "session/request_permission")) == 1
	}, 10*time.Second, 20*time.Millisecond)
	h.rec.Reset()
	res = h.turn("this prompt is never sent")
	require.Equal(t, domain.OutcomeInputRequired, res.Outcome, res.Message())
	// The agent reports the answer it got as a chunk; that report may be
	// flushed when the turn starts or ends, so leave it out here.
	var shape []string
	for _, s := range h.rec.Shape() {
		if s != "notification:permission outcome: cancelled" && s != "notification*" {
			shape = append(shape, s)
		}
	}
	assert.Equal(t, []string{
		"session_started:session started",
		"notification:" + domain.MsgPermissionUngrantable,
		"turn_input_required:" + res.Err.Message,
	}, shape)
	assert.Len(t, received(t, h.agentLg, "session/prompt"), 1, "the held ending sends no prompt")
}

func TestCallerCancellation(t *testing.T) {
	h := start(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan domain.TurnResult, 1)
	go func() { done <- h.sess.Turn(ctx, "#wait-cancel") }()
	require.Eventually(t, func() bool { return len(received(t, h.agentLg, "session/prompt")) == 1 }, 10*time.Second, 10*time.Millisecond)
	cancel()
	res := <-done
	require.Equal(t, domain.OutcomeCancelled, res.Outcome, res.Message())
	assert.Equal(t, domain.KindTurnCancelled, res.Err.Kind)
	assert.Equal(t, domain.MsgTurnCancelled, res.Err.Message)
	assert.Len(t, received(t, h.agentLg, "session/cancel"), 1)
	// The session goes on.
	h.rec.Reset()
	res = h.turn("after the cancel")
	assert.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
}

func TestCancelAnsweredWithRequestCancelled(t *testing.T) {
	h := start(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan domain.TurnResult, 1)
	go func() { done <- h.sess.Turn(ctx, "#cancel-error") }()
	require.Eventually(t, func() bool { return len(received(t, h.agentLg, "session/prompt")) == 1 }, 10*time.Second, 10*time.Millisecond)
	cancel()
	res := <-done
	assert.Equal(t, domain.OutcomeCancelled, res.Outcome, res.Message())
}

func TestCancelIgnoredStopReasonIsOverridden(t *testing.T) {
	h := start(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan domain.TurnResult, 1)
	go func() { done <- h.sess.Turn(ctx, "#cancel-ignore") }()
	require.Eventually(t, func() bool { return len(received(t, h.agentLg, "session/prompt")) == 1 }, 10*time.Second, 10*time.Millisecond)
	cancel()
	res := <-done
	assert.Equal(t, domain.OutcomeCancelled, res.Outcome, "the runtime answered end_turn, but this side cancelled")
	assert.NotContains(t, h.logs.String(), "agent did not answer the prompt after session/cancel")
}

func TestUnansweredCancelIsBoundedByReadTimeout(t *testing.T) {
	h := start(t, nil, withReadTimeout(500*time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan domain.TurnResult, 1)
	go func() { done <- h.sess.Turn(ctx, "#no-response") }()
	require.Eventually(t, func() bool { return len(received(t, h.agentLg, "session/prompt")) == 1 }, 10*time.Second, 10*time.Millisecond)
	cancel()
	res := <-done
	assert.Equal(t, domain.OutcomeCancelled, res.Outcome, res.Message())
	assert.Contains(t, h.logs.String(), "agent did not answer the prompt after session/cancel")
}

func TestTurnTimeout(t *testing.T) {
	h := start(t, nil, func(o *app.Options) { o.Config.TurnTimeout = 300 * time.Millisecond })
	res := h.turn("#wait-cancel")
	require.Equal(t, domain.OutcomeFailed, res.Outcome, res.Message())
	assert.Equal(t, domain.KindTurnTimeout, res.Err.Kind)
	assert.Len(t, received(t, h.agentLg, "session/cancel"), 1)
}

func TestStallTimeout(t *testing.T) {
	h := start(t, nil, func(o *app.Options) { o.Config.StallTimeout = 300 * time.Millisecond })
	res := h.turn("#wait-cancel")
	require.Equal(t, domain.OutcomeFailed, res.Outcome, res.Message())
	assert.Equal(t, domain.KindTurnTimeout, res.Err.Kind)
	assert.Contains(t, res.Err.Message, "stall_timeout_ms")
}

func TestSecondConcurrentTurnRefused(t *testing.T) {
	h := start(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		h.sess.Turn(ctx, "#wait-cancel")
	}()
	require.Eventually(t, func() bool { return len(received(t, h.agentLg, "session/prompt")) == 1 }, 10*time.Second, 10*time.Millisecond)
	res := h.sess.Turn(context.Background(), "second")
	require.Equal(t, domain.OutcomeFailed, res.Outcome)
	assert.Equal(t, domain.KindResponseError, res.Err.Kind)
	assert.Equal(t, domain.MsgTurnInFlight, res.Err.Message)
	cancel()
	wg.Wait()
	assert.Len(t, received(t, h.agentLg, "session/prompt"), 1, "the refused turn sent nothing")
}

func TestGarbageLinesAreMalformedAndTheTurnGoesOn(t *testing.T) {
	h := start(t, nil)
	res := h.turn("#garbage")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.Contains(t, h.rec.Shape(), "malformed:"+domain.MsgUnparseableLine)
}

func TestHugeLineEndsTurnOutcomeUnknown(t *testing.T) {
	h := start(t, nil)
	res := h.turn("#huge-line")
	require.Equal(t, domain.OutcomeFailed, res.Outcome, res.Message())
	assert.Equal(t, domain.KindTurnOutcomeUnknown, res.Err.Kind)
	assert.Equal(t, domain.MsgLineTooLong, res.Err.Message)
	// This side ended the turn and the runtime's own answer was awaited
	// (after at most one session/cancel, none when the answer had already
	// arrived), so the next turn finds the runtime idle.
	assert.LessOrEqual(t, len(received(t, h.agentLg, "session/cancel")), 1)
	// The connection goes on.
	h.rec.Reset()
	res = h.turn("still here")
	assert.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
}

func TestCrashMidTurn(t *testing.T) {
	h := start(t, nil)
	res := h.turn("#crash")
	require.Equal(t, domain.OutcomeFailed, res.Outcome, res.Message())
	assert.Equal(t, domain.KindPortExit, res.Err.Kind)
	assert.Equal(t, domain.MsgConnEndedBeforeResult, res.Err.Message)
	assert.True(t, res.Err.Kind.Retryable())
	res = h.turn("after the crash")
	assert.Equal(t, domain.KindPortExit, res.Err.Kind)
}

func TestExitLeavingDescendantHoldingStdout(t *testing.T) {
	h := start(t, nil, func(o *app.Options) { o.DrainBound = 700 * time.Millisecond })
	res := h.turn("#orphan-stdout")
	require.Equal(t, domain.OutcomeFailed, res.Outcome, res.Message())
	assert.Equal(t, domain.KindPortExit, res.Err.Kind)
	assert.Equal(t, domain.MsgOutputNotCollected, res.Err.Message)
	assert.Contains(t, h.logs.String(), "agent stdout was not fully collected before the session ended")
	assert.Contains(t, h.logs.String(), "drain_bound=700ms")
	res = h.turn("refused")
	assert.Equal(t, domain.MsgOutputNotCollected, res.Err.Message)
	assert.Len(t, received(t, h.agentLg, "session/prompt"), 1)
}

func TestBurstLosesNothing(t *testing.T) {
	h := start(t, nil)
	const n = 50000
	var chunks int
	res := h.turn(fmt.Sprintf("#burst %d", n))
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	for _, ev := range h.rec.OfType(domain.EventNotification) {
		if ev.Message == "" {
			chunks++
		}
	}
	assert.Equal(t, n, chunks)
}
