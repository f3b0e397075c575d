// Package sysclock is the ports.Clock of the real wall clock: the one
// acpdrive uses outside tests.
package sysclock

import (
	"time"

	"github.com/acpdrive/acpdrive/ports"
)

// Clock reads the system's wall clock. The zero value is ready to use.
type Clock struct{}

var _ ports.Clock = Clock{}

// Now returns time.Now().
func (Clock) Now() time.Time { return time.Now() }

// After returns time.After(d).
func (Clock) After(d time.Duration) <-chan time.Time { return time.After(d) }
