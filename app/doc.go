// Package app runs an ACP session over the ports: it launches the runtime
// through a ports.Launcher, performs the initialize handshake, creates the
// session, runs turns one at a time while normalizing the runtime's
// session/update stream into domain events, refuses permission requests the
// way an unattended run must, and tears the process tree down in the fixed,
// bounded order of the specification.
//
// A Session is safe for use by one turn at a time; Stop may be called from
// any goroutine. Every goroutine a Session starts is owned by it and awaited
// by Stop.
package app
