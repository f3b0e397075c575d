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
	// wire reports that a signal of the turn came on the wire: the
	// runtime's journal is then not read.
	wire bool
	// journal counts the turn's journal records already emitted.
	journal int
}

// begin forgets the previous turn's signal.
func (w *retryWatch) begin() {
	w.mu.Lock()
	w.last, w.wire, w.journal = nil, false, 0
	w.mu.Unlock()
}

func (w *retryWatch) saw(r domain.RuntimeRetry) {
	w.mu.Lock()
	w.last, w.wire = &r, true
	w.mu.Unlock()
}

// fromJournal takes the turn's journal records read so far: it returns
// those not yet emitted (none once the wire gave a signal) and remembers
// the latest.
func (w *retryWatch) fromJournal(all []domain.RuntimeRetry) []domain.RuntimeRetry {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.wire || len(all) <= w.journal {
		return nil
	}
	fresh := all[w.journal:]
	w.journal = len(all)
	last := all[len(all)-1]
	w.last = &last
	return fresh
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
	s.journalRetries()
	retry := s.stream.retries.latest()
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

// journalPoll is how often the runtime's journal is read for its retries
// while a turn runs.
const journalPoll = time.Second

// journalRetries reads the runtime's own retries of the turn from its
// journal, when the armed measurement keeps one (ports.RetryJournal: Claude
// Code's transcript) and no retry signal of the turn came on the wire, and
// emits each record not yet emitted as runtime_retrying; like the wire's,
// each is activity for the stall timer (docs/behaviour.md#runtime-retrying).
func (s *Session) journalRetries() {
	j := s.conn.meter.retryJournal()
	if j == nil {
		return
	}
	now := s.clock.Now()
	for _, r := range s.stream.retries.fromJournal(j.TurnRetries(s.ID(), now)) {
		s.stream.emit(domain.Event{Type: domain.EventRuntimeRetrying, Time: now, Message: r.Text(), Retry: &r})
		s.stream.activity(now)
	}
}

// watchJournal reads the runtime's journal every journalPoll while the
// turn runs (journalRetries), when the armed measurement keeps one; the
// returned func stops it and waits for it.
func (s *Session) watchJournal() (stop func()) {
	if s.conn.meter.retryJournal() == nil {
		return func() {}
	}
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-done:
				return
			case <-s.clock.After(journalPoll):
				s.journalRetries()
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// retryJournal is the armed measurement as a ports.RetryJournal; nil when
// none is armed or it keeps no journal of retries.
func (mt *meter) retryJournal() ports.RetryJournal {
	mt.mu.Lock()
	defer mt.mu.Unlock()
	j, _ := mt.m.(ports.RetryJournal)
	return j
}
