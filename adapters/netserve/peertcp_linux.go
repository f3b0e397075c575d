package netserve

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// procNetTCP are the kernel's tables of this network namespace's TCP
// sockets, IPv4 then IPv6.
var procNetTCP = [...]string{"/proc/net/tcp", "/proc/net/tcp6"}

// tcpTimeWait is the state of a closed socket's lingering row, which
// carries no owner (uid 0).
const tcpTimeWait = 0x06

// errPeerNotFound is a peer with no socket in the tables (it closed).
var errPeerNotFound = errors.New("the peer's socket is not in /proc/net/tcp or /proc/net/tcp6")

// tcpRow is one socket of /proc/net/tcp or /proc/net/tcp6.
type tcpRow struct {
	local, remote *net.TCPAddr
	state         int
	uid           int
}

// peerCheckable reports whether a TCP peer's user can be read here: the
// tables must be readable.
func peerCheckable() error {
	f, err := os.Open(procNetTCP[0])
	if err != nil {
		return fmt.Errorf("the peers' users cannot be read: %w", err)
	}
	return f.Close()
}

// tcpPeerUID is the user of the socket at the other end of a loopback
// TCP connection: the row whose local address is conn's remote one and
// whose remote address is conn's local one.
func tcpPeerUID(conn net.Conn) (int, error) {
	local, ok1 := conn.LocalAddr().(*net.TCPAddr)
	remote, ok2 := conn.RemoteAddr().(*net.TCPAddr)
	if !ok1 || !ok2 {
		return 0, errors.New("not a TCP connection")
	}
	if !remote.IP.IsLoopback() {
		return 0, fmt.Errorf("the peer %s is not on loopback: its user cannot be read", remote)
	}
	for _, name := range procNetTCP {
		uid, err := findPeer(name, local, remote)
		if err == nil || !errors.Is(err, errPeerNotFound) {
			return uid, err
		}
	}
	return 0, errPeerNotFound
}

// findPeer looks for the peer's row in one table.
func findPeer(name string, local, remote *net.TCPAddr) (int, error) {
	f, err := os.Open(name)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) { // no IPv6 in this kernel
			return 0, errPeerNotFound
		}
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		row, err := parseTCPRow(sc.Text(), binary.NativeEndian)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
		if row.state != tcpTimeWait && sameAddr(row.local, remote) && sameAddr(row.remote, local) {
			return row.uid, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	return 0, errPeerNotFound
}

// sameAddr compares addresses, an IPv4 one equal to its IPv4-mapped IPv6
// form.
func sameAddr(a, b *net.TCPAddr) bool {
	return a.Port == b.Port && a.IP.Equal(b.IP)
}

// parseTCPRow reads one row of /proc/net/tcp or /proc/net/tcp6:
// "sl local rem st tx:rx tr:when retrnsmt uid …", the addresses as
// HEX-IP:HEX-PORT with the IP's 32-bit words printed in the kernel's
// byte order (order).
func parseTCPRow(line string, order binary.ByteOrder) (tcpRow, error) {
	f := strings.Fields(line)
	if len(f) < 8 {
		return tcpRow{}, fmt.Errorf("a row of %d fields: %q", len(f), line)
	}
	var row tcpRow
	var err error
	if row.local, err = parseTCPAddr(f[1], order); err != nil {
		return tcpRow{}, err
	}
	if row.remote, err = parseTCPAddr(f[2], order); err != nil {
		return tcpRow{}, err
	}
	st, err := strconv.ParseUint(f[3], 16, 8)
	if err != nil {
		return tcpRow{}, fmt.Errorf("state %q: %w", f[3], err)
	}
	row.state = int(st)
	uid, err := strconv.ParseUint(f[7], 10, 32)
	if err != nil {
		return tcpRow{}, fmt.Errorf("uid %q: %w", f[7], err)
	}
	row.uid = int(uid)
	return row, nil
}

// parseTCPAddr reads HEX-IP:HEX-PORT (8 or 32 hex digits for the IP).
func parseTCPAddr(s string, order binary.ByteOrder) (*net.TCPAddr, error) {
	h, p, ok := strings.Cut(s, ":")
	if !ok || (len(h) != 8 && len(h) != 32) {
		return nil, fmt.Errorf("address %q", s)
	}
	raw, err := hex.DecodeString(h)
	if err != nil {
		return nil, fmt.Errorf("address %q: %w", s, err)
	}
	ip := make(net.IP, len(raw))
	for i := 0; i < len(raw); i += 4 {
		order.PutUint32(ip[i:], binary.BigEndian.Uint32(raw[i:i+4]))
	}
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		return nil, fmt.Errorf("port %q: %w", s, err)
	}
	return &net.TCPAddr{IP: ip, Port: int(port)}, nil
}
