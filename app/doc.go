// Package app runs an ACP session over the ports. A session is made of
// parts that each own their state, each in its own file:
//
//   - session.go — the Session: Turn and Stop hand the parts to each
//     other; it holds what the start resolved.
//   - start.go — Start: launch, initialize, resolve (new or continued),
//     the restart to settle the measurement source and the failover to
//     the next host.
//   - runtime.go, teardown.go — the runtime: the process, the connection
//     and the typed client, the exit watcher, and the fixed teardown order
//     that Stop runs.
//   - turn.go, prompt.go — the turn engine (one turn at a time, its
//     endings and bounds) over a prompter, the protocol's side of a turn
//     (ACP v1: session/prompt).
//   - handler.go — the connection handler: routes the runtime's traffic to
//     the part that owns it.
//   - stream.go — the event stream: session/update → domain events,
//     message accumulation, tool-call tracking and the gated-tool notice.
//   - continuation.go — continuing a saved session: the route, the
//     negative control, replay confirmation and the creation-minute hold.
//   - permission.go — the permission policy: how every request from the
//     runtime is answered the way an unattended run must.
//   - measure.go — the meter over the measurement sources; record.go — the
//     capability record; observe.go — the observers; toolservers.go — the
//     tool-server confirmation; verify.go — VerifyCredential; probe.go —
//     Probe; options.go — Options, their defaults and OptionsError;
//     startup.go — the start-up error table.
//
// The contract these files implement is docs/behaviour.md; comments cite
// its sections. A Session is safe for one turn at a time; Stop may be
// called from any goroutine. Every goroutine a Session starts is owned by it
// and awaited by Stop. The package holds no package-level mutable state.
package app
