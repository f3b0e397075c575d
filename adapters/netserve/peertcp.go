package netserve

import (
	"log/slog"
	"net"
	"os"
)

// sameUserListener passes on only the TCP connections whose peer runs as
// this process's user (Options.SameUserOnly,
// docs/behaviour.md#held-sessions); the others are closed at once, before
// a byte of theirs is read.
type sameUserListener struct {
	net.Listener
	logger *slog.Logger
}

// Accept returns the next connection of this user's.
func (l sameUserListener) Accept() (net.Conn, error) {
	for {
		conn, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		uid, err := tcpPeerUID(conn)
		if err == nil && uid == os.Getuid() {
			return conn, nil
		}
		remote := conn.RemoteAddr().String()
		_ = conn.Close()
		if err != nil {
			l.logger.Info("refused a connection whose user could not be read", "remote_addr", remote, "error", err)
			continue
		}
		l.logger.Info("refused a connection of another user", "remote_addr", remote, "peer_uid", uid)
	}
}

// listenTCP listens at host, passing on only this user's peers when
// o.SameUserOnly.
func listenTCP(host string, o Options) (net.Listener, error) {
	if o.SameUserOnly {
		if err := peerCheckable(); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", host)
	if err != nil || !o.SameUserOnly {
		return ln, err
	}
	return sameUserListener{Listener: ln, logger: o.Logger}, nil
}
