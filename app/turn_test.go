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
	"github.com/acpdrive/acpdrive/internal/testsupport/fakeclock"
)

const gapNotice = "notification:this session started with a declared capability gap in: token counts, session continuation"

func TestEchoTurnsOnOneSession(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	id := h.sess.ID()
	require.Equal(t, "ref-1", id)
	require.Equal(t, "session/new", h.sess.Route())

	res := h.turn("hello from the first turn")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.Equal(t, "end_turn", res.StopReason)
	assert.Nil(t, res.Err)
	assert.Equal(t, []string{
		"session_started:session started",
		gapNotice,
		"message_chunk*",
		"notification:hello from the first turn",
		"turn_completed",
	}, h.rec.Shape())
	assert.Equal(t, "hello from the first turn", h.rec.Text())
	started := h.rec.OfType(domain.EventSessionStarted)[0]
	assert.Equal(t, id, started.SessionID)
	for _, ev := range h.rec.All() {
		assert.Equal(t, time.UTC, ev.Time.Location())
	}

	h.rec.Reset()
	res = h.turn("second")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	// The capability notice is once per session.
	assert.Equal(t, []string{"session_started:session started", "message_chunk*", "notification:second", "turn_completed"}, h.rec.Shape())
	assert.Len(t, received(t, h.agentLg, "session/prompt"), 2)
	assert.Len(t, received(t, h.agentLg, "session/new"), 1)
	assert.Equal(t, "second", h.sess.LastMessage().Text)
}

func TestMessagesSplitByMessageID(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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
	assert.Equal(t, long, h.sess.LastMessage().Text)
}

func TestToolCallsOfEveryKind(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	h := start(t, nil)
	res := h.turn("#unannounced-tool")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	results := h.rec.OfType(domain.EventToolResult)
	require.Len(t, results, 1)
	assert.Equal(t, "ghost finished", results[0].Message)
	assert.False(t, results[0].ToolError)
}

// TestToolCallLeftOpenProducesNoResult: a call never terminally updated
// produces no tool_result; it is dropped with a Debug log when its turn
// ends (docs/behaviour.md#tool-results, decision 5).
func TestToolCallLeftOpenProducesNoResult(t *testing.T) {
	t.Parallel()
	h := start(t, script(t, "tool-left-open.json"))
	res := h.turn("go")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.Empty(t, h.rec.OfType(domain.EventToolResult))
	assert.Contains(t, h.logs.String(), "tool call was still open when the turn ended")
	assert.Contains(t, h.logs.String(), "tool_call_id=open-1")
	// A later update for the dropped call opens a new record; its terminal
	// update is one result, timed from that update.
	res = h.turn("#finish")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	results := h.rec.OfType(domain.EventToolResult)
	require.Len(t, results, 1)
	assert.Equal(t, "execute", results[0].ToolName)
	assert.Equal(t, "finished late", results[0].Message)
}

func TestUpdatesMapping(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	res := h.turn("#updates")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	var shape []string
	for _, s := range h.rec.Shape() {
		if !strings.HasPrefix(s, "session_started") && !strings.Contains(s, "capability gap") {
			shape = append(shape, s)
		}
	}
	// Every update is an event, in wire order; the session-state updates and
	// the runtime's notices do not end the message, the unknown variant does.
	assert.Equal(t, []string{
		"other_message:reasoning block",
		"other_message:plan update",
		"message_chunk*",
		"commands_available:web",
		"mode_changed:code",
		"config_options:model=m1",
		"session_info:Reference session",
		"context_usage:53000 of 200000 context tokens (26.5%), cost 0.0450 USD",
		"message_chunk*",
		"runtime_notice:Claude Code is running in a sandbox.",
		"runtime_notice:authentication: Anthropic API key (api_key, ANTHROPIC_API_KEY)",
		"runtime_notice:MCP server down",
		"notification:Before the session-state updates. After the session-state updates.",
		"malformed:received a session update of an unrecognized kind",
		"tool_result:read:ok:Read README.md",
		"malformed:agent sent a message chunk this client does not render",
		"turn_completed",
	}, shape)
	assert.Equal(t, "Before the session-state updates. After the session-state updates.", h.sess.LastMessage().Text,
		"a runtime notice is never the last message")
	for _, ev := range h.rec.All() {
		assert.NotContains(t, ev.Message, "other session", "an update for another session must be dropped")
		if ev.Type != domain.EventSessionStarted && ev.Type != domain.EventTurnCompleted {
			assert.NotEmpty(t, ev.Message, "no event without content: %+v", ev)
		}
	}
	assert.Contains(t, h.logs.String(), "dropped an update for another session")

	one := func(typ domain.EventType) domain.Event {
		t.Helper()
		evs := h.rec.OfType(typ)
		require.Len(t, evs, 1, typ)
		return evs[0]
	}
	assert.Equal(t, []domain.Command{{Name: "web", Description: "Search the web"}}, one(domain.EventCommandsAvailable).Commands)
	assert.Equal(t, "code", one(domain.EventModeChanged).ModeID)
	assert.Equal(t, []domain.ConfigOption{{ID: "model", Name: "Model", Value: "m1", Values: []string{"m1"}}}, one(domain.EventConfigOptions).ConfigOptions)
	info := one(domain.EventSessionInfo)
	assert.Equal(t, "Reference session", info.Title)
	assert.Equal(t, "2026-01-01T00:00:00Z", info.UpdatedAt)
	assert.Equal(t, &domain.ContextUsage{Used: 53000, Size: 200000, Cost: &domain.Cost{Amount: 0.045, Currency: "USD"}}, one(domain.EventContextUsage).Context)
	tool := one(domain.EventToolResult)
	assert.Equal(t, "Read README.md", tool.ToolTitle)
	assert.Equal(t, "completed", tool.ToolStatus)
	assert.Equal(t, "call-read", tool.ToolCallID)
	var plan []domain.PlanEntry
	for _, ev := range h.rec.OfType(domain.EventOtherMessage) {
		plan = append(plan, ev.Plan...)
	}
	assert.Equal(t, []domain.PlanEntry{
		{Content: "Read the task", Priority: "high", Status: "completed"},
		{Content: "Write the code", Priority: "medium", Status: "in_progress"},
		{Content: "Run the tests", Priority: "low", Status: "pending"},
	}, plan)
	var sources []domain.Notice
	for _, ev := range h.rec.OfType(domain.EventRuntimeNotice) {
		sources = append(sources, *ev.Notice)
	}
	assert.Equal(t, []domain.Notice{
		{Source: domain.NoticeFromMessage},
		{Source: domain.NoticeFromAuthStatus},
		{Source: domain.NoticeFromUpdate, Severity: "warning"},
	}, sources)
}

func TestStopReasons(t *testing.T) {
	t.Parallel()
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
		{"#prompt-error", domain.OutcomeFailed, "turn_ended_with_error", domain.KindResponseError, "session/prompt error -32603: Internal error: scripted failure"},
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
			want := c.event
			if c.message != "" {
				want += ":" + c.message
			}
			assert.Equal(t, want, last)
			if c.kind == "" {
				assert.Nil(t, res.Err)
				return
			}
			require.NotNil(t, res.Err)
			assert.Equal(t, c.kind, res.Err.Kind)
			assert.Equal(t, c.message, res.Err.Message)
		})
	}
}

func TestPermissionRefusedTurnGoesOn(t *testing.T) {
	t.Parallel()
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
	assert.Empty(t, received(t, h.agentLg, "session/cancel"))
}

func TestPermissionWithoutRefusalNeedsPerson(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	res := h.turn("#permission-no-reject")
	require.Equal(t, domain.OutcomeInputRequired, res.Outcome, res.Message())
	require.NotNil(t, res.Err)
	assert.Equal(t, domain.KindTurnInputRequired, res.Err.Kind)
	assert.Equal(t, domain.MsgInputRequired+": a permission request offered no option to refuse", res.Err.Message)
	assert.False(t, res.Err.Kind.Retryable())
	shape := h.rec.Shape()
	notice := indexOf(shape, "notification:"+domain.MsgPermissionUngrantable)
	require.NotEqual(t, -1, notice, "%q", shape)
	assert.Less(t, notice, len(shape)-1, "the notice precedes the outcome")
	assert.Equal(t, "turn_input_required:"+res.Err.Message, shape[len(shape)-1])
	answers := received(t, h.agentLg, "session/request_permission")
	require.Len(t, answers, 1)
	assert.Contains(t, string(answers[0].Message), `"outcome":"cancelled"`)
	assert.Len(t, received(t, h.agentLg, "session/cancel"), 1, "session/cancel is sent once")
}

func TestElicitationNeedsPerson(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	res := h.turn("#elicitation")
	require.Equal(t, domain.OutcomeInputRequired, res.Outcome, res.Message())
	assert.Equal(t, domain.MsgInputRequired+": an answer to a question", res.Err.Message)
	assert.Contains(t, h.rec.Shape(), "notification:"+domain.MsgElicitation)
	answers := received(t, h.agentLg, "elicitation/create")
	require.Len(t, answers, 1)
	assert.Contains(t, string(answers[0].Message), `"code":-32601`)
}

func TestUnimplementedClientMethod(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	res := h.turn("#fs-call")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.Contains(t, h.rec.Shape(), "malformed:"+domain.MsgUnimplementedMethod)
	answers := received(t, h.agentLg, "fs/read_text_file")
	require.Len(t, answers, 1)
	assert.Contains(t, string(answers[0].Message), `"code":-32601`)
	assert.Contains(t, string(answers[0].Message), `"data":{"method":"fs/read_text_file"}`)
}

func TestBetweenTurnsEndingIsHeld(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	res := h.turn("#between-turns")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	// The agent reports the answer it got as a chunk; once the client has
	// read that chunk, it has handled the request before it.
	h.waitText("permission outcome: cancelled")
	h.rec.Reset()
	res = h.turn("this prompt is never sent")
	require.Equal(t, domain.OutcomeInputRequired, res.Outcome, res.Message())
	// "An update between turns." was reported when the report's chunk
	// (another messageId) arrived, before the reset.
	assert.Equal(t, []string{
		"notification:permission outcome: cancelled",
		"session_started:session started",
		`permission_decision:person execute "Push to origin" (preset refuse)`,
		"notification:" + domain.MsgPermissionUngrantable,
		"turn_input_required:" + res.Err.Message,
	}, withoutKeepAlives(h.rec.Shape()))
	assert.Len(t, received(t, h.agentLg, "session/prompt"), 1, "the held ending sends no prompt")
	// Only the first ending is held: the turn after runs normally.
	res = h.turn("now it is sent")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.Len(t, received(t, h.agentLg, "session/prompt"), 2)
}

func TestCallerCancellation(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := h.turnAsync(ctx, "#wait-cancel")
	h.waitReceived("session/prompt", 1)
	cancel()
	res := <-done
	require.Equal(t, domain.OutcomeCancelled, res.Outcome, res.Message())
	assert.Equal(t, domain.KindTurnCancelled, res.Err.Kind)
	assert.Equal(t, domain.MsgTurnCancelled, res.Err.Message)
	assert.Len(t, received(t, h.agentLg, "session/cancel"), 1)
	shape := h.rec.Shape()
	assert.Equal(t, "turn_cancelled:turn cancelled", shape[len(shape)-1])
	// The session goes on.
	h.rec.Reset()
	res = h.turn("after the cancel")
	assert.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
}

func TestTurnCancelledBeforeThePromptIsWritten(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := h.sess.Turn(ctx, "never sent")
	require.Equal(t, domain.OutcomeCancelled, res.Outcome, res.Message())
	assert.Empty(t, received(t, h.agentLg, "session/prompt"))
	assert.Empty(t, received(t, h.agentLg, "session/cancel"), "no session/cancel for a prompt never written")
}

func TestCancelAnsweredWithRequestCancelled(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := h.turnAsync(ctx, "#cancel-error")
	h.waitReceived("session/prompt", 1)
	cancel()
	res := <-done
	assert.Equal(t, domain.OutcomeCancelled, res.Outcome, res.Message())
	assert.Equal(t, domain.KindTurnCancelled, res.Err.Kind, "-32800 after our cancel is its acknowledgment")
}

func TestCancelIgnoredStopReasonIsOverridden(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := h.turnAsync(ctx, "#cancel-ignore")
	h.waitReceived("session/prompt", 1)
	cancel()
	res := <-done
	assert.Equal(t, domain.OutcomeCancelled, res.Outcome, "the runtime answered end_turn, but this side cancelled")
	assert.NotContains(t, h.logs.String(), "agent did not answer the prompt after session/cancel")
}

// TestUnansweredCancelIsBoundedByReadTimeout runs on a fake clock with
// read_timeout 0, which means 30 s (decision 7): the turn waits exactly
// that long for the runtime's answer after session/cancel.
func TestUnansweredCancelIsBoundedByReadTimeout(t *testing.T) {
	t.Parallel()
	clock := fakeclock.New(epoch)
	h := start(t, nil, withClock(clock), withReadTimeout(0))
	ctx, cancel := context.WithCancel(context.Background())
	done := h.turnAsync(ctx, "#no-response")
	h.waitReceived("session/prompt", 1)
	// The chunk follows the agent's decision never to answer: a cancel
	// that overtook it would be answered (the agent's timing, not ours).
	h.waitText("I will never answer.")
	cancel()
	h.waitReceived("session/cancel", 1)
	require.NoError(t, clock.WaitForTimers(context.Background(), 1))
	clock.Advance(30*time.Second - time.Millisecond)
	select {
	case res := <-done:
		t.Fatalf("the turn ended before 30 s: %s", res.Message())
	case <-time.After(20 * time.Millisecond):
	}
	clock.Advance(time.Millisecond)
	var res domain.TurnResult
	select {
	case res = <-done:
	case <-time.After(waitFor):
		t.Fatal("the turn did not end at 30 s")
	}
	assert.Equal(t, domain.OutcomeCancelled, res.Outcome, res.Message())
	assert.Contains(t, h.logs.String(), "agent did not answer the prompt after session/cancel")
	assert.Contains(t, h.logs.String(), "read_timeout=30s")
}

func TestTurnTimeout(t *testing.T) {
	t.Parallel()
	const bound = 300 * time.Millisecond
	h := start(t, nil, withConfig(func(c *domain.SessionSettings) { c.TurnTimeout = bound }))
	began := time.Now()
	res := h.turn("#wait-cancel")
	took := time.Since(began)
	require.Equal(t, domain.OutcomeFailed, res.Outcome, res.Message())
	assert.Equal(t, domain.KindTurnTimeout, res.Err.Kind)
	assert.Equal(t, "the turn exceeded turn_timeout_ms", res.Err.Message)
	assert.Len(t, received(t, h.agentLg, "session/cancel"), 1)
	assert.GreaterOrEqual(t, took, bound)
	shape := h.rec.Shape()
	assert.Equal(t, "turn_ended_with_error:"+res.Err.Message, shape[len(shape)-1])
}

// TestStallTimeout runs on a fake clock: an event re-arms the stall timer,
// and the turn ends once stall_timeout_ms pass without one.
func TestStallTimeout(t *testing.T) {
	t.Parallel()
	const stall = 5 * time.Minute
	clock := fakeclock.New(epoch)
	h := start(t, nil, withClock(clock), withConfig(func(c *domain.SessionSettings) { c.StallTimeout = stall }))
	done := h.turnAsync(context.Background(), "#wait-cancel")
	h.waitText("Waiting for a cancel.") // the turn's one chunk arrived at the turn's start time
	require.NoError(t, clock.WaitForTimers(context.Background(), 1))
	clock.Advance(stall - time.Second)
	select {
	case res := <-done:
		t.Fatalf("the turn ended before the stall bound: %s", res.Message())
	case <-time.After(20 * time.Millisecond):
	}
	clock.Advance(time.Second)
	var res domain.TurnResult
	select {
	case res = <-done:
	case <-time.After(waitFor):
		t.Fatal("the turn did not end at the stall bound")
	}
	require.Equal(t, domain.OutcomeFailed, res.Outcome, res.Message())
	assert.Equal(t, domain.KindTurnTimeout, res.Err.Kind)
	assert.Equal(t, "the agent produced no event within stall_timeout_ms", res.Err.Message)
	assert.Len(t, received(t, h.agentLg, "session/cancel"), 1)
}

func TestSecondConcurrentTurnRefused(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		h.sess.Turn(ctx, "#wait-cancel")
	}()
	h.waitReceived("session/prompt", 1)
	before := len(h.rec.All())
	res := h.sess.Turn(context.Background(), "second")
	require.Equal(t, domain.OutcomeFailed, res.Outcome)
	assert.Equal(t, domain.KindResponseError, res.Err.Kind)
	assert.Equal(t, domain.MsgTurnInFlight, res.Err.Message)
	for _, ev := range h.rec.All()[before:] {
		assert.NotEqual(t, domain.EventSessionStarted, ev.Type, "the refused call emits nothing")
	}
	cancel()
	wg.Wait()
	assert.Len(t, received(t, h.agentLg, "session/prompt"), 1, "the refused turn sent nothing")
}

func TestGarbageLinesAreMalformedAndTheTurnGoesOn(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	res := h.turn("#garbage")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	n := 0
	for _, s := range h.rec.Shape() {
		if s == "malformed:"+domain.MsgUnparseableLine {
			n++
		}
	}
	assert.Equal(t, 3, n)
}

func TestHugeLineEndsTurnOutcomeUnknown(t *testing.T) {
	t.Parallel()
	h := start(t, nil)
	res := h.turn("#huge-line")
	require.Equal(t, domain.OutcomeFailed, res.Outcome, res.Message())
	assert.Equal(t, domain.KindTurnOutcomeUnknown, res.Err.Kind)
	assert.Equal(t, domain.MsgLineTooLong, res.Err.Message)
	assert.Contains(t, h.rec.Shape(), "malformed:"+domain.MsgLineTooLong)
	assert.Contains(t, h.logs.String(), "agent sent a line over the line bound")
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
	t.Parallel()
	h := start(t, nil)
	res := h.turn("#crash")
	require.Equal(t, domain.OutcomeFailed, res.Outcome, res.Message())
	assert.Equal(t, domain.KindPortExit, res.Err.Kind)
	assert.Equal(t, domain.MsgConnEndedBeforeResult, res.Err.Message)
	assert.True(t, res.Err.Kind.Retryable())
	res = h.turn("after the crash")
	assert.Equal(t, domain.KindPortExit, res.Err.Kind)
	assert.Equal(t, domain.MsgConnEndedBeforeResult, res.Err.Message)
	assert.Len(t, received(t, h.agentLg, "session/prompt"), 1)
}

// TestExitLeavingDescendantHoldingStdout needs a real process (a
// descendant holding stdout); the drain bound runs on a fake clock.
func TestExitLeavingDescendantHoldingStdout(t *testing.T) {
	t.Parallel()
	clock := fakeclock.New(epoch)
	h := startProc(t, nil, withClock(clock), func(o *app.Options) { app.SetDrainBound(o, 700*time.Millisecond) })
	done := h.turnAsync(context.Background(), "#orphan-stdout")
	require.NoError(t, clock.WaitForTimers(context.Background(), 1))
	clock.Advance(700*time.Millisecond - time.Millisecond)
	select {
	case res := <-done:
		t.Fatalf("the turn ended before the drain bound: %s", res.Message())
	case <-time.After(20 * time.Millisecond):
	}
	clock.Advance(time.Millisecond)
	res := <-done
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
	t.Parallel()
	h := start(t, nil)
	// The million-notification burst runs in the bench module; here enough
	// to overrun every pipe buffer many times over.
	const n = 10000
	var chunks int
	res := h.turn(fmt.Sprintf("#burst %d", n))
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	for _, ev := range h.rec.OfType(domain.EventMessageChunk) {
		if ev.Message != "" {
			chunks++
		}
	}
	assert.Equal(t, n, chunks)
	for _, ev := range h.rec.All() {
		assert.False(t, ev.Type == domain.EventNotification && ev.Message == "", "no event without content")
	}
}
