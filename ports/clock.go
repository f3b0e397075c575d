package ports

import "time"

// Clock is the wall clock as the application sees it, so tests can move
// time without sleeping.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// After returns a channel that receives once d has elapsed.
	After(d time.Duration) <-chan time.Time
}
