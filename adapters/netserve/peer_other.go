//go:build !linux

package netserve

import "net"

// sameUser trusts the socket's mode (0600) where the platform does not
// tell the peer's user.
func sameUser(net.Conn) bool { return true }
