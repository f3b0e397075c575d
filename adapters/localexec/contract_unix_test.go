//go:build unix

package localexec

// gracefulUnavailable reports whether this platform cannot deliver the
// graceful signal: SIGTERM always reaches the group on Unix.
func gracefulUnavailable() bool { return false }
