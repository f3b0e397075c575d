package app

import (
	"fmt"
	"log/slog"
	"sync"

	"github.com/acpdrive/acpdrive/domain"
)

// DefaultEventBacklog is how many deliveries a session on a shared
// process may have waiting for its consumers (Options.OnEvent,
// OnAgentText, OnToolStart and the observers) before its running turn is
// ended, when HostOptions.EventBacklog is 0
// (docs/behaviour.md#runtime-host).
const DefaultEventBacklog = 4096

// outbox hands a session's events to its consumers. On a connection of
// its own the reader calls them itself, in order: a slow consumer slows
// the runtime down and loses nothing (docs/behaviour.md#events). On a
// shared connection each session's consumers run on a goroutine of its
// own, in order, so that one session's slow consumer never stalls the
// reader every session on the process depends on; past bound waiting
// deliveries the session's later deliveries are dropped until the running
// turn ended (overflow is told once, to end it), and the turn's end waits
// for everything still queued.
type outbox struct {
	log    *slog.Logger
	queued bool // false: deliveries run on the caller's goroutine
	bound  int
	// overflow is told, on the reader, when a delivery did not fit.
	overflow func()

	mu       sync.Mutex
	idle     *sync.Cond
	waiting  []func()
	running  bool // the delivery goroutine runs
	dropping bool // a delivery did not fit: the rest of the turn is dropped
	dropped  int
}

func newOutbox(log *slog.Logger, queued bool, bound int, overflow func()) *outbox {
	o := &outbox{log: log, queued: queued, bound: bound, overflow: overflow}
	o.idle = sync.NewCond(&o.mu)
	return o
}

// event delivers ev to consume: at once on a connection of its own (no
// allocation on that path), else queued.
func (o *outbox) event(ev domain.Event, consume func(domain.Event)) {
	if !o.queued {
		consume(ev)
		return
	}
	e := ev
	o.push(func() { consume(e) })
}

// text delivers one chunk's text to consume, as event does.
func (o *outbox) text(messageID, text string, consume func(string, string)) {
	if !o.queued {
		consume(messageID, text)
		return
	}
	o.push(func() { consume(messageID, text) })
}

// push delivers f after what is queued, on the delivery goroutine; on a
// connection of its own, at once.
func (o *outbox) push(f func()) {
	if !o.queued {
		f()
		return
	}
	o.mu.Lock()
	if o.dropping {
		o.dropped++
		o.mu.Unlock()
		return
	}
	if len(o.waiting) >= o.bound {
		o.dropping, o.dropped = true, 1
		o.mu.Unlock()
		o.log.Warn("a session's event consumer fell behind on a shared process; the rest of its turn is dropped", "backlog", o.bound)
		o.overflow()
		return
	}
	o.waiting = append(o.waiting, f)
	if !o.running {
		o.running = true
		go o.run()
	}
	o.mu.Unlock()
}

// run delivers what is queued, then ends; wait awaits it.
func (o *outbox) run() {
	for {
		o.mu.Lock()
		if len(o.waiting) == 0 {
			o.running = false
			o.idle.Broadcast()
			o.mu.Unlock()
			return
		}
		f := o.waiting[0]
		o.waiting[0] = nil
		o.waiting = o.waiting[1:]
		o.mu.Unlock()
		o.deliver(f)
	}
}

// deliver runs one delivery; a consumer's panic is its own bug, not the
// session's end (docs/behaviour.md#the-librarys-own-contract).
func (o *outbox) deliver(f func()) {
	defer func() {
		if v := recover(); v != nil {
			o.log.Error("an event consumer panicked", "panic", fmt.Sprint(v))
		}
	}()
	f()
}

// wait returns once every delivery pushed so far has run.
func (o *outbox) wait() {
	if !o.queued {
		return
	}
	o.mu.Lock()
	for o.running {
		o.idle.Wait()
	}
	o.mu.Unlock()
}

// settle waits for what is queued and takes deliveries again; it reports
// how many were dropped since the overflow.
func (o *outbox) settle() (dropped int) {
	o.wait()
	o.mu.Lock()
	defer o.mu.Unlock()
	dropped = o.dropped
	o.dropping, o.dropped = false, 0
	return dropped
}
