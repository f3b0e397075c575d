package app

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// observation fans a session's events and steps out to the observers of
// Options.Observers (docs/behaviour.md#observability): a plain Observer
// gets the events, a ports.SessionObserver one SessionObservation per
// session start, which also gets the steps, notices and turns. One
// observation spans a whole Start, a restart to settle included.
type observation struct {
	plain []ports.Observer
	per   []ports.SessionObservation

	mu      sync.Mutex // guards the fields below
	started bool
	ended   bool
}

// observe begins the observation of one session start at at; ctx is the
// start's, passed on without its cancellation.
func observe(ctx context.Context, observers []ports.Observer, at time.Time) *observation {
	ctx = context.WithoutCancel(ctx)
	o := &observation{}
	for _, ob := range observers {
		if so, ok := ob.(ports.SessionObserver); ok {
			o.per = append(o.per, so.ObserveSession(ctx, at))
			continue
		}
		o.plain = append(o.plain, ob)
	}
	return o
}

// event hands one event to every observer.
func (o *observation) event(ev domain.Event) {
	if o == nil {
		return
	}
	for _, ob := range o.plain {
		ob.Observe(ev)
	}
	for _, so := range o.per {
		so.Observe(ev)
	}
}

// step reports one step that ran from start to end.
func (o *observation) step(name, within string, start, end time.Time, err error) {
	if o == nil {
		return
	}
	st := ports.Step{Name: name, Within: within, Start: start, End: end, Err: err}
	for _, so := range o.per {
		so.Step(st)
	}
}

// notice reports a notice of acpdrive's own.
func (o *observation) notice(at time.Time, msg string) {
	if o == nil {
		return
	}
	for _, so := range o.per {
		so.Notice(at, msg)
	}
}

// start reports the kept session.
func (o *observation) start(info ports.SessionInfo) {
	if o == nil {
		return
	}
	o.mu.Lock()
	o.started = true
	o.mu.Unlock()
	for _, so := range o.per {
		so.Started(info)
	}
}

// turnStarted reports a turn and returns the merged `_meta` pairs for its
// prompt (the first observer to name a key wins).
func (o *observation) turnStarted(at time.Time) map[string]string {
	if o == nil {
		return nil
	}
	var meta map[string]string
	for _, so := range o.per {
		for k, v := range so.TurnStarted(at) {
			if !allowedMetaKey(k) {
				continue
			}
			if meta == nil {
				meta = make(map[string]string)
			}
			if _, dup := meta[k]; !dup {
				meta[k] = v
			}
		}
	}
	return meta
}

// allowedMetaKey admits the keys an observer may put into a prompt's
// `_meta` (docs/behaviour.md#observability): the W3C trace context keys
// the ACP schema reserves at its root, and nothing else.
func allowedMetaKey(k string) bool {
	return slices.Contains([]string{"traceparent", "tracestate", "baggage"}, k)
}

// turnEnded reports a turn's result.
func (o *observation) turnEnded(at time.Time, res domain.TurnResult) {
	if o == nil {
		return
	}
	for _, so := range o.per {
		so.TurnEnded(at, res)
	}
}

// end closes the observation once; caps is the record at the end.
func (o *observation) end(at time.Time, caps domain.Capabilities, err error) {
	if o == nil {
		return
	}
	o.mu.Lock()
	if o.ended {
		o.mu.Unlock()
		return
	}
	o.ended = true
	started := o.started
	o.mu.Unlock()
	for _, so := range o.per {
		so.Ended(ports.SessionEnd{At: at, Err: err, Started: started, Capabilities: caps})
	}
}
