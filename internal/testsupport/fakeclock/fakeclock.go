// Package fakeclock is a ports.Clock whose time moves only when a test says
// so. A test hands the Clock to the code under test, waits until that code
// is waiting on a timer (WaitForTimers or BlockUntil), then moves time with
// Advance; nothing sleeps.
package fakeclock

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/acpdrive/acpdrive/ports"
)

// Clock is a fake ports.Clock. It is safe for concurrent use.
type Clock struct {
	mu     sync.Mutex
	now    time.Time
	seq    uint64
	timers []*timer
	// wake is closed (and replaced) whenever the set of pending timers
	// changes, so waiters can re-check.
	wake chan struct{}
}

// timer is one pending After.
type timer struct {
	when time.Time
	seq  uint64 // creation order, to break ties in when
	ch   chan time.Time
}

var _ ports.Clock = (*Clock)(nil)

// New returns a Clock whose current time is start.
func New(start time.Time) *Clock {
	return &Clock{now: start, wake: make(chan struct{})}
}

// Now returns the fake current time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// After returns a channel that receives once the fake time reaches Now()+d.
// The value received is the moment the timer was due. For d <= 0 the
// channel has already received the current time and no timer is left
// pending. The channel has room for its one value, so a timer fires whether
// or not anyone is receiving.
func (c *Clock) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.seq++
	t := &timer{when: c.now.Add(d), seq: c.seq, ch: ch}
	i := sort.Search(len(c.timers), func(i int) bool { return c.timers[i].due(t) })
	c.timers = append(c.timers, nil)
	copy(c.timers[i+1:], c.timers[i:])
	c.timers[i] = t
	c.changed()
	return ch
}

// due reports whether t fires after o: later due time, or the same due time
// and created later.
func (t *timer) due(o *timer) bool {
	if !t.when.Equal(o.when) {
		return t.when.After(o.when)
	}
	return t.seq > o.seq
}

// Advance moves the fake time forward by d and fires every timer due by
// then, in the order they are due (timers due at the same moment in the
// order they were made). While it fires a timer, Now reports that timer's
// due time; once it returns, Now reports the old time plus d. A negative d
// is treated as 0 (time never goes back); Advance(0) fires nothing new
// since every timer is due strictly after its creation.
func (c *Clock) Advance(d time.Duration) {
	if d < 0 {
		d = 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	target := c.now.Add(d)
	fired := 0
	for _, t := range c.timers {
		if t.when.After(target) {
			break
		}
		c.now = t.when
		t.ch <- t.when
		fired++
	}
	c.now = target
	if fired > 0 {
		rest := make([]*timer, len(c.timers)-fired)
		copy(rest, c.timers[fired:])
		c.timers = rest
		c.changed()
	}
}

// Pending returns how many timers have not fired yet.
func (c *Clock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// WaitForTimers waits until at least n timers are pending, so a test can
// advance only once the code under test is waiting. It returns ctx's error
// if ctx ends first.
func (c *Clock) WaitForTimers(ctx context.Context, n int) error {
	for {
		c.mu.Lock()
		if len(c.timers) >= n {
			c.mu.Unlock()
			return nil
		}
		wake := c.wake
		c.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// BlockUntil is WaitForTimers without a bound: it returns once at least n
// timers are pending.
func (c *Clock) BlockUntil(n int) {
	_ = c.WaitForTimers(context.Background(), n)
}

// changed wakes every waiter. c.mu must be held.
func (c *Clock) changed() {
	close(c.wake)
	c.wake = make(chan struct{})
}
