//go:build windows

package domain

// SplitHostCommandLine splits a command line by the rules of the platform
// acpdrive runs on: here, Windows (SplitWindowsCommandLine).
func SplitHostCommandLine(s string) ([]string, error) { return SplitWindowsCommandLine(s) }
