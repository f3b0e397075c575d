//go:build !linux

package netserve

import (
	"net"
	"os"
)

// peerCheckable: where the platform does not tell a TCP peer's user,
// Options.SameUserOnly leaves the token alone to guard the server
// (docs/behaviour.md#held-sessions).
func peerCheckable() error { return nil }

// tcpPeerUID: the peer is taken to be this user's (see peerCheckable).
func tcpPeerUID(net.Conn) (int, error) { return os.Getuid(), nil }
