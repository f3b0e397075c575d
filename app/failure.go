package app

import (
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
	"github.com/acpdrive/acpdrive/protocol/acpwire"
	"github.com/acpdrive/acpdrive/protocol/jsonrpc"
)

// Messages of the failures this side reads from a turn the runtime called
// complete (docs/behaviour.md#failures).
const (
	// msgReplyIsError starts the turn_failed message of a completed turn
	// whose reply is, whole, the runtime's error report.
	msgReplyIsError = "the runtime reported a provider failure as the turn's reply: "
	// msgMarkedFailure starts the turn_failed message of a turn whose
	// response carried the session failure extension's error record.
	msgMarkedFailure = "the runtime marked the turn as failed: "
)

// retryWatch remembers the latest runtime_retrying signal of the running
// turn, so a turn its own bound ends while the runtime retries carries
// the failure's class (docs/behaviour.md#failures).
type retryWatch struct {
	mu   sync.Mutex
	last *domain.RuntimeRetry
}

// begin forgets the previous turn's signal.
func (w *retryWatch) begin() {
	w.mu.Lock()
	w.last = nil
	w.mu.Unlock()
}

func (w *retryWatch) saw(r domain.RuntimeRetry) {
	w.mu.Lock()
	w.last = &r
	w.mu.Unlock()
}

// latest is the latest signal of the turn, nil when none came.
func (w *retryWatch) latest() *domain.RuntimeRetry {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

// runtimeRetry reads a session_info_update's _meta for a runtime's own
// retry of a provider failure and emits runtime_retrying; it reports
// whether it was one. The event is activity: a retry the runtime
// announces is not a stall (docs/behaviour.md#failures).
func (s *eventStream) runtimeRetry(meta json.RawMessage, at time.Time) bool {
	if len(meta) == 0 {
		return false
	}
	r, ok := acpwire.RuntimeFailures.ClassifyRetrySignal(meta)
	if !ok {
		return false
	}
	s.retries.saw(r)
	s.emit(domain.Event{Type: domain.EventRuntimeRetrying, Time: at, Message: r.Text(), Retry: &r})
	s.activity(at)
	return true
}

// applyFailureMarker reads the session failure extension's error record
// on a prompt response's _meta: it ends the turn turn_failed with its
// class whatever the stop reason said (the marker wins,
// docs/behaviour.md#failures).
func applyFailureMarker(res *domain.TurnResult, meta json.RawMessage) {
	if res.Outcome != domain.OutcomeCompleted || len(meta) == 0 {
		return
	}
	f, ok := acpwire.RuntimeFailures.ClassifyFailureMarker(meta)
	if !ok {
		return
	}
	res.Outcome = domain.OutcomeFailed
	res.Err = domain.NewError(domain.KindTurnFailed, msgMarkedFailure+f.Evidence)
	res.Failure = &f
}

// classifyFailure gives every turn that did not complete its failure
// class, and fails a completed turn whose reply is, whole, one of its
// runtime's documented error reports (docs/behaviour.md#failures).
func (s *Session) classifyFailure(res *domain.TurnResult) {
	if res.Outcome == domain.OutcomeCompleted {
		f, ok := acpwire.RuntimeFailures.ClassifyReply(s.res.agent.Name, s.res.agent.Version, res.Reply)
		if !ok {
			return
		}
		res.Outcome = domain.OutcomeFailed
		res.Err = domain.NewError(domain.KindTurnFailed, msgReplyIsError+domain.TruncateRunes(res.Reply, domain.MessageCap))
		res.Failure = &f
		return
	}
	if res.Failure != nil || res.Err == nil {
		return
	}
	var rpc *jsonrpc.Error
	var f domain.Failure
	retry := s.stream.retries.latest()
	if retry == nil {
		retry = s.journalRetries()
	}
	switch {
	case errors.As(res.Err, &rpc):
		f = acpwire.RuntimeFailures.ClassifyRPCErrorAt(domain.RPCError{Code: rpc.Code, Message: rpc.Message, Data: rpc.Data},
			s.clock.Now(), time.LoadLocation)
		if f.Class == domain.FailureUnknown {
			f.Retryable = res.Err.Kind.Retryable()
		}
		if retry != nil && retry.RetryAfterMS > 0 && (f.Class == domain.FailureRateLimited || f.Class == domain.FailureUnknown) {
			// The runtime's journal names the spent usage window behind
			// the rate limit it gave up on (docs/behaviour.md#usage-windows).
			f = retry.Failure()
			f.Evidence = "the runtime gave up retrying: " + retry.Evidence
		}
	case retry != nil && res.Err.Kind == domain.KindTurnTimeout:
		f = retry.Failure()
	default:
		f = domain.UnknownFailure(res.Err.Kind, "error kind "+string(res.Err.Kind))
	}
	res.Failure = &f
}

// journalRetries reads the runtime's own retries of the turn from its
// journal, when the armed measurement keeps one (ports.RetryJournal: Claude
// Code's transcript), and emits each as runtime_retrying; it returns the
// latest, nil when there is none. The journal is read once the turn has
// ended, so these events come after the turn's own
// (docs/behaviour.md#runtime-retrying).
func (s *Session) journalRetries() *domain.RuntimeRetry {
	j := s.conn.meter.retryJournal()
	if j == nil {
		return nil
	}
	now := s.clock.Now()
	var last *domain.RuntimeRetry
	for _, r := range j.TurnRetries(s.ID(), now) {
		s.stream.retries.saw(r)
		s.stream.emit(domain.Event{Type: domain.EventRuntimeRetrying, Time: now, Message: r.Text(), Retry: &r})
		last = &r
	}
	return last
}

// retryJournal is the armed measurement as a ports.RetryJournal; nil when
// none is armed or it keeps no journal of retries.
func (mt *meter) retryJournal() ports.RetryJournal {
	mt.mu.Lock()
	defer mt.mu.Unlock()
	j, _ := mt.m.(ports.RetryJournal)
	return j
}
