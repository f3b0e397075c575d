//go:build unix

package main

import "golang.org/x/sys/unix"

// fdSize is the size of the terminal fd is, 0 where it cannot be known.
func fdSize(fd uintptr) (width, height int) {
	ws, err := unix.IoctlGetWinsize(int(fd), unix.TIOCGWINSZ)
	if err != nil {
		return 0, 0
	}
	return int(ws.Col), int(ws.Row)
}
