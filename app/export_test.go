package app

import "time"

// SetDrainBound sets how long a session started with o keeps reading the
// runtime's output after its exit (DefaultDrainBound otherwise), for this
// package's tests only: Options holds what callers set.
func SetDrainBound(o *Options, d time.Duration) { o.drainBound = d }
