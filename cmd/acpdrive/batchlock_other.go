//go:build !unix

package main

import "os"

// lockFile takes no lock where flock is not offered: a journal there is
// not guarded against two batches (docs/behaviour.md#batch-journal).
func lockFile(*os.File) error { return nil }
