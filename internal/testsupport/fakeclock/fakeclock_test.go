package fakeclock

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var epoch = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// fired reports whether ch has a value ready, and the value.
func fired(ch <-chan time.Time) (time.Time, bool) {
	select {
	case v := <-ch:
		return v, true
	default:
		return time.Time{}, false
	}
}

func TestNowAndAdvance(t *testing.T) {
	c := New(epoch)
	if got := c.Now(); !got.Equal(epoch) {
		t.Fatalf("Now = %v, want %v", got, epoch)
	}
	c.Advance(90 * time.Second)
	if got, want := c.Now(), epoch.Add(90*time.Second); !got.Equal(want) {
		t.Fatalf("Now = %v, want %v", got, want)
	}
	c.Advance(-time.Hour)
	if got, want := c.Now(), epoch.Add(90*time.Second); !got.Equal(want) {
		t.Fatalf("negative Advance moved time: Now = %v, want %v", got, want)
	}
}

func TestAfterFiresWhenDue(t *testing.T) {
	c := New(epoch)
	ch := c.After(time.Second)
	if c.Pending() != 1 {
		t.Fatalf("Pending = %d, want 1", c.Pending())
	}
	c.Advance(999 * time.Millisecond)
	if _, ok := fired(ch); ok {
		t.Fatal("fired before it was due")
	}
	c.Advance(time.Millisecond)
	v, ok := fired(ch)
	if !ok {
		t.Fatal("did not fire when due")
	}
	if want := epoch.Add(time.Second); !v.Equal(want) {
		t.Fatalf("fired with %v, want %v", v, want)
	}
	if c.Pending() != 0 {
		t.Fatalf("Pending = %d after firing, want 0", c.Pending())
	}
	c.Advance(time.Hour)
	if _, ok := fired(ch); ok {
		t.Fatal("fired twice")
	}
}

func TestAfterNonPositiveFiresAtOnce(t *testing.T) {
	c := New(epoch)
	for _, d := range []time.Duration{0, -time.Second} {
		v, ok := fired(c.After(d))
		if !ok || !v.Equal(epoch) {
			t.Fatalf("After(%v): fired=%v value=%v, want the current time at once", d, ok, v)
		}
	}
	if c.Pending() != 0 {
		t.Fatalf("Pending = %d, want 0", c.Pending())
	}
}

func TestAdvanceFiresInOrder(t *testing.T) {
	c := New(epoch)
	var order []int
	// Created out of order; 2 and 3 are due at the same moment.
	durations := []time.Duration{3 * time.Second, time.Second, 2 * time.Second, 2 * time.Second, 10 * time.Second}
	chans := make([]<-chan time.Time, len(durations))
	for i, d := range durations {
		chans[i] = c.After(d)
	}
	// Each timer due by then has fired with its own due time.
	c.Advance(5 * time.Second)
	for i, ch := range chans {
		if v, ok := fired(ch); ok {
			order = append(order, i)
			if want := epoch.Add(durations[i]); !v.Equal(want) {
				t.Errorf("timer %d fired with %v, want %v", i, v, want)
			}
		}
	}
	if len(order) != 4 {
		t.Fatalf("fired %v, want timers 0-3", order)
	}
	if c.Pending() != 1 {
		t.Fatalf("Pending = %d, want 1", c.Pending())
	}
	if got, want := c.Now(), epoch.Add(5*time.Second); !got.Equal(want) {
		t.Fatalf("Now = %v, want %v", got, want)
	}
}

// TestFiringOrderObserved checks the order a single receiver sees when it
// waits on timers one after another as Advance fires them.
func TestFiringOrderObserved(t *testing.T) {
	c := New(epoch)
	a := c.After(2 * time.Second)
	b := c.After(time.Second)
	d := c.After(time.Second)
	c.Advance(2 * time.Second)
	vb, _ := fired(b)
	vd, _ := fired(d)
	va, _ := fired(a)
	if !vb.Before(va) || !vb.Equal(vd) {
		t.Fatalf("due times: b=%v d=%v a=%v", vb, vd, va)
	}
}

func TestWaitForTimers(t *testing.T) {
	defer goleak.VerifyNone(t)
	c := New(epoch)
	got := make(chan time.Time)
	go func() {
		// The code under test: waits on a timer, then on another.
		<-c.After(time.Minute)
		got <- (<-c.After(time.Minute))
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.WaitForTimers(ctx, 1); err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Minute)
	c.BlockUntil(1)
	c.Advance(time.Minute)
	select {
	case v := <-got:
		if want := epoch.Add(2 * time.Minute); !v.Equal(want) {
			t.Fatalf("second timer fired with %v, want %v", v, want)
		}
	case <-ctx.Done():
		t.Fatal("second timer did not fire")
	}
}

func TestWaitForTimersContextEnds(t *testing.T) {
	c := New(epoch)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := c.WaitForTimers(ctx, 1); err != context.DeadlineExceeded {
		t.Fatalf("WaitForTimers = %v, want DeadlineExceeded", err)
	}
	if err := c.WaitForTimers(ctx, 0); err != nil {
		t.Fatalf("WaitForTimers(0) = %v, want nil at once", err)
	}
}

func TestConcurrentUse(t *testing.T) {
	defer goleak.VerifyNone(t)
	c := New(epoch)
	const workers, each = 8, 50
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				ch := c.After(time.Duration(i%5+1) * time.Millisecond)
				_ = c.Now()
				<-ch
			}
		}()
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	for {
		select {
		case <-done:
			if c.Pending() != 0 {
				t.Fatalf("Pending = %d at the end, want 0", c.Pending())
			}
			return
		default:
			c.Advance(time.Millisecond)
			_ = c.Pending()
		}
	}
}
