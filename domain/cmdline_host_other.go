//go:build !windows

package domain

// SplitHostCommandLine splits a command line by the rules of the platform
// acpdrive runs on: here, a POSIX shell's (SplitCommandLine).
func SplitHostCommandLine(s string) ([]string, error) { return SplitCommandLine(s) }
