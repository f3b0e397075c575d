// Package app runs an ACP session over the ports. A session has four
// parts, each owning its state, each in one file:
//
//   - lifecycle.go — the session lifecycle: Start (launch, handshake,
//     session resolution), Turn (one prompt at a time, its endings and
//     bounds) and Stop (the fixed teardown order). It owns the process,
//     the connection, the capability record and the running turn.
//   - stream.go — the event stream: session/update → domain events,
//     message accumulation, tool-call tracking and the gated-tool notice.
//   - continuation.go — continuing a saved session: the route, the
//     negative control, replay confirmation and the creation-minute hold,
//     with its CreationStore injected.
//   - permission.go — the permission policy: how every request from the
//     runtime is answered the way an unattended run must.
//
// The rest supports them: startup.go maps start-up failures onto the
// documented kinds, teardown.go carries out the order, handler.go hands the
// connection's traffic to the parts, measure.go consumes the measurement
// sources, verify.go runs credential verification and probe.go the probe.
//
// The contract these files implement is docs/behaviour.md; comments cite
// its sections. A Session is safe for one turn at a time; Stop may be
// called from any goroutine. Every goroutine a Session starts is owned by it
// and awaited by Stop. The package holds no package-level mutable state.
package app
