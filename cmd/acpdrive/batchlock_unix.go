//go:build unix

package main

import (
	"errors"
	"os"
	"syscall"
)

// errJournalLocked: another batch holds the journal's lock.
var errJournalLocked = errors.New("a batch of this journal is still running (its lock is held)")

// lockFile takes the exclusive lock of f without waiting
// (docs/behaviour.md#batch-journal): the system releases it when the
// process ends, however it ends.
func lockFile(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errJournalLocked
	}
	return err
}
