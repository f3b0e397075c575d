package app

import (
	"context"
	"strings"
	"sync"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
)

// SteerMode is what Steer does with a message the runtime cannot take
// because it does not advertise steering (docs/behaviour.md#steering).
type SteerMode int

const (
	// SteerOnly refuses the message (agent_not_found, reason not_offered).
	SteerOnly SteerMode = iota
	// SteerOrQueue keeps the message and puts it before the next turn's
	// prompt instead; Steer then returns an error that
	// errors.Is(err, domain.ErrSteerQueued).
	SteerOrQueue
)

// steerQueue holds the messages queued for the next prompt.
type steerQueue struct {
	mu   sync.Mutex
	msgs []string
}

func (q *steerQueue) add(text string) {
	q.mu.Lock()
	q.msgs = append(q.msgs, text)
	q.mu.Unlock()
}

// prefix returns prompt preceded by every queued message (each followed by
// a blank line) and empties the queue.
func (q *steerQueue) prefix(prompt string) string {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.msgs) == 0 {
		return prompt
	}
	out := strings.Join(q.msgs, "\n\n") + "\n\n" + prompt
	q.msgs = nil
	return out
}

// steerable reports whether a turn runs whose prompt went out and whose
// ending is not decided yet.
func (e *turnEngine) steerable() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	t := e.running.Load()
	if t == nil || !t.sending {
		return false
	}
	select {
	case <-t.endCh:
		return false
	default:
		return true
	}
}

// Steer sends text into the turn that is running, through the runtime's
// _session/steering (docs/behaviour.md#steering), bounded by ctx and
// read_timeout_ms. On success the event stream shows a steered event.
//
// Refusals, nothing sent: between turns (or once the running turn's ending
// is decided, or when the runtime answers that no turn could take it) the
// error is response_error with domain.MsgSteerNoTurn; on a runtime that
// does not advertise steering it is agent_not_found with reason
// not_offered (domain.MsgSteerNotOffered), or, in SteerOrQueue mode, the
// same kind and reason wrapping domain.ErrSteerQueued, the message kept for
// the next turn's prompt. A
// runtime's refusal of the request is response_error.
func (s *Session) Steer(ctx context.Context, text string, mode ...SteerMode) error {
	if err := s.swap.wait(ctx, false); err != nil {
		// A retry is replacing the runtime (docs/behaviour.md#fleet).
		return domain.WrapError(domain.KindTurnCancelled, "the session's runtime was being replaced when the steer's context ended", err)
	}
	if s.life.stopped.Load() {
		return domain.NewError(domain.KindTurnCancelled, domain.MsgSessionStopped)
	}
	if !s.res.agent.Advertised.Steering {
		if len(mode) > 0 && mode[0] == SteerOrQueue {
			s.queued.add(text)
			return domain.WrapError(domain.KindAgentNotFound, domain.MsgSteerNotOffered, domain.ErrSteerQueued).
				WithReason(domain.ReasonNotOffered)
		}
		return domain.NewError(domain.KindAgentNotFound, domain.MsgSteerNotOffered).WithReason(domain.ReasonNotOffered)
	}
	if !s.turns.steerable() {
		return domain.NewError(domain.KindResponseError, domain.MsgSteerNoTurn)
	}
	callCtx, cancel := context.WithTimeout(ctx, s.opts.Settings.EffectiveReadTimeout())
	defer cancel()
	resp, err := s.conn.rt.client.Steer(callCtx, acpwire.NewSteerRequest(s.ID(), text))
	if err != nil {
		return domain.WrapError(domain.KindResponseError, "the runtime refused _session/steering", err)
	}
	if resp.Outcome == acpwire.SteerOutcomePromptRequired {
		return domain.NewError(domain.KindResponseError, domain.MsgSteerNoTurn)
	}
	s.log.Debug("steered the running turn", "outcome", resp.Outcome)
	s.stream.emit(domain.Event{Type: domain.EventSteered, SessionID: s.ID(), Message: text, Origin: domain.OriginAcpdrive})
	return nil
}
