package sysclock_test

import (
	"testing"
	"time"

	"github.com/acpdrive/acpdrive/adapters/sysclock"
)

func TestClockMovesAndFires(t *testing.T) {
	c := sysclock.Clock{}
	before := c.Now()
	select {
	case at := <-c.After(time.Millisecond):
		if at.Before(before) {
			t.Fatalf("After fired at %v, before %v", at, before)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("After(1ms) did not fire within 5 s")
	}
	if !c.Now().After(before) {
		t.Fatal("Now did not move")
	}
}
