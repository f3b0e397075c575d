//go:build !unix

package main

import (
	"errors"
	"os"
	"syscall"
)

// detachedAttr is the holder's start on a system without sessions: no
// attribute (docs/behaviour.md#held-sessions says what is built).
func detachedAttr() *syscall.SysProcAttr { return nil }

// ownedByMe trusts the directory's permissions where ownership is not
// a user id.
func ownedByMe(os.FileInfo) bool { return true }

// holdersListed: holderAlive cannot tell a running holder here, so held
// removes no directory.
const holdersListed = false

// holderAlive: held sessions are not listed where holders are not built.
func holderAlive(int, string) bool { return false }

// terminateHolder is refused where holders are not built.
func terminateHolder(int) error { return errors.New("release is not built on this system") }
