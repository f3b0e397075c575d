package app_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
)

// TestV2AcceptanceIsBounded: a v2 runtime that never accepts the prompt
// ends the turn response_timeout within read_timeout_ms, with the turn
// and stall bounds off, as a v1 prompt the runtime does not take
// (docs/behaviour.md#hangs-and-bounds, #protocol-v2); the prompt, written
// whole, is then cancelled once.
func TestV2AcceptanceIsBounded(t *testing.T) {
	t.Parallel()
	h := start(t, append(script(t, "v2-never-accepts.json"), "--protocol", "2"),
		withReadTimeout(time.Second),
		withConfig(func(s *domain.SessionSettings) {
			s.Protocol, s.TurnTimeout, s.StallTimeout = domain.ProtocolV2, 0, 0
		}))
	// The caller's own deadline only keeps a broken build from hanging.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res := h.sess.Turn(ctx, "x")
	require.NotNil(t, res.Err)
	assert.Equal(t, domain.KindResponseTimeout, res.Err.Kind, res.Message())
	assert.Equal(t, domain.MsgTimedOut, res.Err.Message)
	h.waitReceived("session/cancel", 1)
	h.stop()
	assert.Len(t, received(t, h.agentLg, "session/cancel"), 1, "the cancel goes out once")
}

// TestAutoOnV1DeclaresV1Capabilities: --protocol auto against a runtime
// that answers 1 declares what --protocol 1 declares (subagents, session
// notices), and a v2 runtime is still asked for 2 in v2's shape
// (docs/behaviour.md#protocol-v2).
func TestAutoOnV1DeclaresV1Capabilities(t *testing.T) {
	t.Parallel()
	caps := map[domain.ProtocolChoice]json.RawMessage{}
	for _, choice := range []domain.ProtocolChoice{domain.ProtocolV1, domain.ProtocolAuto} {
		h := start(t, []string{"--protocol", "1"}, withConfig(func(s *domain.SessionSettings) {
			s.Protocol, s.Subagents = choice, true
		}))
		require.Equal(t, 1, h.sess.AgentInfo().ProtocolVersion)
		calls := received(t, h.agentLg, "initialize")
		require.Len(t, calls, 1)
		var m struct {
			Params struct {
				ClientCapabilities json.RawMessage `json:"clientCapabilities"`
				ClientInfo         json.RawMessage `json:"clientInfo"`
			} `json:"params"`
		}
		require.NoError(t, json.Unmarshal(calls[0].Message, &m))
		require.NotEmpty(t, m.Params.ClientInfo, "%s: %s", choice, calls[0].Message)
		caps[choice] = m.Params.ClientCapabilities
	}
	require.NotEmpty(t, caps[domain.ProtocolV1])
	assert.Contains(t, string(caps[domain.ProtocolV1]), `"subagents"`)
	assert.JSONEq(t, string(caps[domain.ProtocolV1]), string(orNull(caps[domain.ProtocolAuto])),
		"auto declares v1's client capabilities")

	h := start(t, []string{"--protocol", "2"}, withConfig(func(s *domain.SessionSettings) { s.Protocol = domain.ProtocolAuto }))
	require.Equal(t, 2, h.sess.AgentInfo().ProtocolVersion)
	calls := received(t, h.agentLg, "initialize")
	require.Len(t, calls, 1)
	assert.Contains(t, string(calls[0].Message), `"protocolVersion":2`)
	assert.Contains(t, string(calls[0].Message), `"info":{`)
	assert.Contains(t, string(calls[0].Message), `"capabilities":{`)
}

func orNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}

// TestV2ResumeSnapshotConfirms: a session/resume answered with the
// session's state snapshot and no replay (a session with nothing to
// replay) is confirmed by the snapshot naming the session
// (docs/behaviour.md#protocol-v2).
func TestV2ResumeSnapshotConfirms(t *testing.T) {
	t.Parallel()
	h := start(t, append(script(t, "v2-resume-snapshot.json"), "--protocol", "2"),
		withReadTimeout(time.Second),
		withConfig(func(s *domain.SessionSettings) { s.Protocol = domain.ProtocolV2 }), withResume("saved-1"))
	assert.Equal(t, acpwire.MethodSessionResume, h.sess.Route(), h.logs.String())
	assert.Equal(t, "saved-1", h.sess.ID())
	assert.NotContains(t, h.sess.Capabilities().Gaps(), domain.CapSessionContinuation)
	assert.Empty(t, received(t, h.agentLg, "session/new"))
	res := h.turn("after the resume")
	assert.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
}

// TestV2ResumeWaitsForEarlierWork: a resume whose snapshot says running
// (the runtime still works from before) holds the first prompt until
// that work's idle, with a notice; the old work's tail is not the first
// turn's reply (docs/behaviour.md#protocol-v2).
func TestV2ResumeWaitsForEarlierWork(t *testing.T) {
	t.Parallel()
	h := start(t, append(script(t, "v2-resume-running.json"), "--protocol", "2"),
		withReadTimeout(20*time.Second),
		withConfig(func(s *domain.SessionSettings) { s.Protocol = domain.ProtocolV2 }), withResume("saved-1"))
	require.Equal(t, acpwire.MethodSessionResume, h.sess.Route())
	assert.True(t, hasNotice(h, "still working"), "%v", h.rec.Shape())
	h.rec.Reset()
	res := h.turn("the new prompt")
	require.Equal(t, domain.OutcomeCompleted, res.Outcome, res.Message())
	assert.Equal(t, "the new reply", h.rec.Text(), "the turn's reply is its own")
	assert.Empty(t, received(t, h.agentLg, "session/cancel"), "the earlier work ended on its own")
}

// TestV2ResumeCancelsEarlierWorkAtTheBound: earlier work that does not end
// within read_timeout_ms is cancelled (session/cancel, once) before the
// first prompt, and the notice says so.
func TestV2ResumeCancelsEarlierWorkAtTheBound(t *testing.T) {
	t.Parallel()
	h := start(t, append(script(t, "v2-resume-running-forever.json"), "--protocol", "2"),
		withReadTimeout(time.Second),
		withConfig(func(s *domain.SessionSettings) { s.Protocol = domain.ProtocolV2 }), withResume("saved-1"))
	require.Equal(t, acpwire.MethodSessionResume, h.sess.Route())
	cancels := received(t, h.agentLg, "session/cancel")
	require.Len(t, cancels, 1, "the earlier work is cancelled before Start returns")
	assert.Contains(t, string(cancels[0].Message), `"sessionId":"saved-1"`)
	assert.Empty(t, received(t, h.agentLg, "session/prompt"))
	assert.True(t, hasNotice(h, "session/cancel"), "%v", h.rec.Shape())
}

func hasNotice(h *harness, part string) bool {
	for _, ev := range h.rec.OfType(domain.EventNotification) {
		if strings.Contains(ev.Message, part) {
			return true
		}
	}
	return false
}

// TestUnaskedCancellationSameOnBothVersions: a cancellation acpdrive did
// not ask for (no cancel sent, no close) is the runtime's failure on both
// versions: a prompt answered -32800 is response_error, a cancelled stop
// reason (v2: an idle cancelled) is turn_failed; only a cancellation
// acpdrive asked for is turn_cancelled (docs/behaviour.md#turn-disposition).
func TestUnaskedCancellationSameOnBothVersions(t *testing.T) {
	t.Parallel()
	for _, v := range versions {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			h := start(t, append(script(t, "unasked-cancel.json"), "--protocol", v.agent),
				withConfig(func(s *domain.SessionSettings) { s.Protocol = v.client }))
			res := h.turn("#refused")
			require.NotNil(t, res.Err)
			assert.Equal(t, domain.OutcomeFailed, res.Outcome)
			assert.Equal(t, domain.KindResponseError, res.Err.Kind, res.Message())
			assert.Equal(t, "session/prompt error -32800: Request cancelled", res.Err.Message)

			res = h.turn("#cancelled")
			require.NotNil(t, res.Err)
			assert.Equal(t, domain.OutcomeFailed, res.Outcome)
			assert.Equal(t, domain.KindTurnFailed, res.Err.Kind, res.Message())
			assert.Equal(t, domain.MsgUnaskedCancel, res.Err.Message)
			assert.Empty(t, received(t, h.agentLg, "session/cancel"))
		})
	}
}

// TestV2CancelBeforeAcceptanceCancelsOnce: a turn the caller cancels
// while the runtime has not accepted its prompt is turn_cancelled, and
// session/cancel goes out once although the acceptance bound passes
// during the wait after it (docs/behaviour.md#overrides).
func TestV2CancelBeforeAcceptanceCancelsOnce(t *testing.T) {
	t.Parallel()
	h := start(t, append(script(t, "v2-never-accepts.json"), "--protocol", "2"),
		withReadTimeout(time.Second),
		withConfig(func(s *domain.SessionSettings) {
			s.Protocol, s.TurnTimeout, s.StallTimeout = domain.ProtocolV2, 0, 0
		}))
	ctx, cancel := context.WithCancel(context.Background())
	done := h.turnAsync(ctx, "x")
	h.waitReceived("session/prompt", 1)
	cancel()
	res := <-done
	assert.Equal(t, domain.OutcomeCancelled, res.Outcome, res.Message())
	h.stop()
	assert.Len(t, received(t, h.agentLg, "session/cancel"), 1, "the cancel goes out once")
}
