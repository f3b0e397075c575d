//go:build unix

package faults

import (
	"context"
	"testing"
	"time"

	"github.com/acpdrive/acpdrive/domain"
)

// Hostile ACP v2 runtimes (docs/behaviour.md#protocol-v2): a v2 turn
// starts when the prompt is accepted and ends at the idle state_update,
// so a runtime can hang or lie in ways a v1 runtime cannot.

const initV2 = `{"protocolVersion":2,"info":{"name":"hostile-v2","version":"1"},"capabilities":{"session":{}},"authMethods":[]}`

// Messages of the v2 endings, as docs/behaviour.md#protocol-v2 spells them.
const (
	idleNoStopReason = "the agent reported idle without a stop reason"
	stateMalformed   = "the agent sent a state_update without a state"
)

func state(s string) string { return `{"sessionUpdate":"state_update","state":"` + s + `"}` }

func idle(stopReason string) string {
	return `{"sessionUpdate":"state_update","state":"idle","stopReason":"` + stopReason + `"}`
}

// handshakeV2 answers initialize with v2 and session/new with s1.
func (p *peer) handshakeV2() {
	m := p.await("initialize")
	p.reply(m.ID, initV2)
	m = p.await("session/new")
	p.reply(m.ID, `{"sessionId":"s1"}`)
}

// acceptV2 waits for a prompt and accepts it: the answer, then running.
func (p *peer) acceptV2() {
	m := p.await("session/prompt")
	p.reply(m.ID, `{"messageId":"u1"}`)
	p.update("s1", state("running"))
}

// serveV2 accepts every prompt and ends it end_turn, forever.
func (p *peer) serveV2() {
	for {
		p.acceptV2()
		p.update("s1", chunk("ok"))
		p.update("s1", idle("end_turn"))
	}
}

// hostileV2 runs the v2 behaviours; it reports whether name is one.
func hostileV2(p *peer, name string) bool {
	switch name {
	case "v2-never-idle":
		// The prompt is accepted, one chunk, then nothing, whatever comes.
		p.onEOF = ignoreEOF
		p.handshakeV2()
		p.acceptV2()
		p.update("s1", chunk("accepted"))
		for {
			p.next()
		}
	case "v2-foreign-idle":
		p.handshakeV2()
		p.acceptV2()
		p.update("other-session", idle("refusal"))
		p.update("s1", chunk("mine"))
		p.update("s1", idle("end_turn"))
		p.serveV2()
	case "v2-idle-no-stop-reason":
		p.handshakeV2()
		p.acceptV2()
		p.update("s1", chunk("partial"))
		p.update("s1", state("idle"))
		p.serveV2()
	case "v2-second-idle":
		p.handshakeV2()
		p.acceptV2()
		p.update("s1", chunk("one"))
		p.update("s1", idle("end_turn"))
		p.update("s1", idle("refusal"))
		p.serveV2()
	case "v2-garbage-between-states":
		p.handshakeV2()
		p.acceptV2()
		p.raw("not json at all\n")
		p.update("s1", `{"sessionUpdate":"state_update"}`)
		p.update("s1", state("paused"))
		p.update("s1", state("requires_action"))
		p.raw("{\"jsonrpc\":\"2.0\",\"method\":\n")
		p.update("s1", state("running"))
		p.update("s1", chunk("still here"))
		p.update("s1", idle("end_turn"))
		p.serveV2()
	default:
		return false
	}
	return true
}

// v2Rig is a rig on a hostile v2 runtime, driven with --protocol 2.
func v2Rig(t *testing.T, behaviour string) *rig {
	r := newRig(t, behaviour)
	r.opts.Settings.Protocol = domain.ProtocolV2
	return r
}

// TestFaultsV2 runs the hostile v2 runtimes: each ends as
// docs/behaviour.md#protocol-v2 says within its bound, and nothing of the
// runtime survives (the rig's cleanup checks).
func TestFaultsV2(t *testing.T) {
	cases := []struct {
		name string
		run  func(t *testing.T)
	}{
		{"accepted-never-finished/stall", func(t *testing.T) {
			r := v2Rig(t, "v2-never-idle")
			stall := 500 * time.Millisecond
			r.opts.Settings.StallTimeout = stall
			r.mustStart()
			res, elapsed := r.turn(context.Background(), "go")
			wantResult(t, res, domain.OutcomeFailed, domain.KindTurnTimeout, stalled)
			if elapsed < stall {
				t.Errorf("turn ended after %s, before the stall timeout", elapsed)
			}
			within(t, "the stalled turn", elapsed, stall+readTimeout)
		}},
		{"accepted-never-finished/turn-timeout", func(t *testing.T) {
			r := v2Rig(t, "v2-never-idle")
			r.opts.Settings.TurnTimeout = 600 * time.Millisecond
			r.mustStart()
			res, elapsed := r.turn(context.Background(), "go")
			wantResult(t, res, domain.OutcomeFailed, domain.KindTurnTimeout, turnExceeded)
			within(t, "the timed-out turn", elapsed, 600*time.Millisecond+readTimeout)
		}},
		{"accepted-never-finished/cancel", func(t *testing.T) {
			r := v2Rig(t, "v2-never-idle")
			r.mustStart()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			timer := time.AfterFunc(300*time.Millisecond, cancel)
			defer timer.Stop()
			res, elapsed := r.turn(ctx, "go")
			wantResult(t, res, domain.OutcomeCancelled, domain.KindTurnCancelled, "turn cancelled")
			within(t, "the cancelled turn", elapsed, 300*time.Millisecond+readTimeout)
			elapsedStop, err := r.stop(stopGrace + 10*time.Second)
			if err != nil && !isSurvivors(err) {
				t.Errorf("stop: %v", err)
			}
			within(t, "the teardown", elapsedStop, stopGrace+readTimeout)
		}},
		{"state-update-for-unknown-session", func(t *testing.T) {
			r := v2Rig(t, "v2-foreign-idle")
			r.mustStart()
			res, _ := r.turn(context.Background(), "go")
			wantResult(t, res, domain.OutcomeCompleted, "", "")
			if res.StopReason != "end_turn" {
				t.Errorf("stop reason %q; want end_turn (the other session's idle is not this turn's)", res.StopReason)
			}
			if got := r.sess.LastMessage().Text; got != "mine" {
				t.Errorf("last message %q; want mine", got)
			}
			r.mustComplete("again")
		}},
		{"idle-without-stop-reason", func(t *testing.T) {
			r := v2Rig(t, "v2-idle-no-stop-reason")
			r.mustStart()
			res, _ := r.turn(context.Background(), "go")
			wantResult(t, res, domain.OutcomeFailed, domain.KindTurnOutcomeUnknown, idleNoStopReason)
			r.mustComplete("again")
		}},
		{"second-idle", func(t *testing.T) {
			r := v2Rig(t, "v2-second-idle")
			r.mustStart()
			r.mustComplete("one")
			res, _ := r.turn(context.Background(), "two")
			wantResult(t, res, domain.OutcomeCompleted, "", "")
			if res.StopReason != "end_turn" {
				t.Errorf("second turn stop reason %q; want end_turn (the stray idle belongs to no turn)", res.StopReason)
			}
		}},
		{"garbage-between-states", func(t *testing.T) {
			r := v2Rig(t, "v2-garbage-between-states")
			r.mustStart()
			res, _ := r.turn(context.Background(), "go")
			wantResult(t, res, domain.OutcomeCompleted, "", "")
			if n := r.count(domain.EventMalformed, unparseable); n != 2 {
				t.Errorf("%d malformed-line events; want 2", n)
			}
			if n := r.count(domain.EventMalformed, stateMalformed); n != 1 {
				t.Errorf("%d state_update-without-state events; want 1", n)
			}
			if got := r.sess.LastMessage().Text; got != "still here" {
				t.Errorf("last message %q; want still here", got)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t)
		})
	}
}
