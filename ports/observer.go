package ports

import "github.com/acpdrive/acpdrive/domain"

// Observer receives every normalized event of a session, in order, on the
// session's reader goroutine: a slow observer slows the runtime down
// (backpressure) and loses nothing. It must not call back into the
// session. Tracing and metrics adapters implement it.
type Observer interface {
	Observe(ev domain.Event)
}
