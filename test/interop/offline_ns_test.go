//go:build interop

package interop

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// The offline proof: a runtime runs in a network namespace of its own
// whose only way out is a veth interface ("out") holding the default
// route, and whose /etc/resolv.conf (bind-mounted by `ip netns exec`)
// names a nameserver behind that route. Every fake server the rig serves
// is forwarded into the namespace on the same 127.0.0.1 address, so the
// runtime's configuration is unchanged. Any packet the runtime sends
// anywhere but loopback (a DNS lookup of a telemetry host, a connect to
// any address) leaves through "out", whose transmit counter must read 0
// when the test ends. IPv6 is off on "out" (loopback keeps ::1), so an
// IPv6 connect fails at once for want of a route: nothing leaves that way
// either. Needs root and iproute2 (CI runs as root).

const (
	// nsOut is the namespace's one interface besides loopback; nsPeer
	// its veth peer, which answers nothing.
	nsOut  = "out"
	nsPeer = "sink"
	// nsGateway is the default route's gateway and the nameserver.
	nsGateway = "10.253.0.2"
)

// netNamespace is one test's network namespace.
type netNamespace struct {
	name string
	ip   string // the ip command

	mu        sync.Mutex
	listeners []net.Listener
	conns     []net.Conn
	wg        sync.WaitGroup
}

// ipCommand locates iproute2's ip; without it (or without root) the
// offline proof cannot run: CI fails, elsewhere the test skips.
func ipCommand(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("ip")
	if err != nil {
		for _, c := range []string{"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip"} {
			if _, serr := os.Stat(c); serr == nil {
				p, err = c, nil
				break
			}
		}
	}
	why := ""
	switch {
	case err != nil:
		why = "iproute2's ip is not installed"
	case os.Geteuid() != 0:
		why = "the offline proof needs root (network namespaces)"
	}
	if why != "" {
		if os.Getenv("CI") != "" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	return p
}

// newNetNamespace creates the namespace; the test's cleanup deletes it
// after the forwarders are closed.
func newNetNamespace(t testing.TB) *netNamespace {
	t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	n := &netNamespace{name: "acpdrive-interop-" + hex.EncodeToString(b[:]), ip: ipCommand(t)}
	etc := filepath.Join("/etc/netns", n.name)
	t.Cleanup(func() {
		n.close()
		_ = exec.Command(n.ip, "netns", "delete", n.name).Run()
		_ = os.RemoveAll(etc)
	})
	n.run(t, "netns", "add", n.name)
	// IPv6 off for the interfaces made from here on (not loopback), where
	// the kernel has IPv6 at all; no sysctl binary needed.
	n.run(t, "netns", "exec", n.name, "sh", "-c",
		"f=/proc/sys/net/ipv6/conf/default/disable_ipv6; [ ! -e $f ] || echo 1 > $f")
	n.run(t, "-n", n.name, "link", "set", "lo", "up")
	n.run(t, "-n", n.name, "link", "add", nsOut, "type", "veth", "peer", "name", nsPeer)
	n.run(t, "-n", n.name, "addr", "add", "10.253.0.1/24", "dev", nsOut)
	n.run(t, "-n", n.name, "link", "set", nsPeer, "up")
	n.run(t, "-n", n.name, "link", "set", nsOut, "up")
	// A permanent neighbour entry for the gateway: the packets themselves
	// go out (no ARP in between), and are counted.
	var peer []struct {
		Address string `json:"address"`
	}
	require.NoError(t, json.Unmarshal([]byte(n.run(t, "-n", n.name, "-j", "link", "show", nsPeer)), &peer))
	require.Len(t, peer, 1)
	n.run(t, "-n", n.name, "neigh", "add", nsGateway, "lladdr", peer[0].Address, "dev", nsOut, "nud", "permanent")
	n.run(t, "-n", n.name, "route", "add", "default", "via", nsGateway, "dev", nsOut)
	writeFile(t, filepath.Join(etc, "resolv.conf"), "nameserver "+nsGateway+"\noptions timeout:1 attempts:1\n")
	require.Zero(t, n.transmitted(t), "a fresh namespace has sent nothing")
	return n
}

func (n *netNamespace) run(t testing.TB, args ...string) string {
	t.Helper()
	out, err := exec.Command(n.ip, args...).CombinedOutput()
	require.NoError(t, err, "ip %s: %s", strings.Join(args, " "), out)
	return string(out)
}

// prefix runs a command inside the namespace (ip execs it: the PID and
// the process group are the command's own).
func (n *netNamespace) prefix() []string { return []string{n.ip, "netns", "exec", n.name} }

// transmitted is how many packets left through the namespace's way out.
func (n *netNamespace) transmitted(t testing.TB) int64 {
	t.Helper()
	var links []struct {
		Stats struct {
			TX struct {
				Packets int64 `json:"packets"`
			} `json:"tx"`
		} `json:"stats64"`
	}
	require.NoError(t, json.Unmarshal([]byte(n.run(t, "-n", n.name, "-j", "-s", "link", "show", nsOut)), &links))
	require.Len(t, links, 1)
	return links[0].Stats.TX.Packets
}

// forward listens on addr (a 127.0.0.1 host:port of this process's
// namespace) inside the namespace too, and relays each connection to
// addr outside it.
func (n *netNamespace) forward(t testing.TB, addr string) {
	t.Helper()
	type result struct {
		ln  net.Listener
		err error
	}
	ch := make(chan result, 1)
	go func() {
		// The socket is made on a thread moved into the namespace, then
		// moved back before the thread goes back to the scheduler. A
		// thread is never left to end with its goroutine: a sandboxed
		// runtime started from it would get its parent-death signal
		// (bwrap --die-with-parent) and die mid-turn, as it did under the
		// parallel suite. Only when the way back fails does the thread
		// stay locked and end here.
		runtime.LockOSThread()
		home, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: err}
			return
		}
		defer home.Close()
		f, err := os.Open(filepath.Join("/run/netns", n.name))
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: err}
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: fmt.Errorf("setns: %w", err)}
			return
		}
		ln, err := net.Listen("tcp", addr)
		if unix.Setns(int(home.Fd()), unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		ch <- result{ln: ln, err: err}
	}()
	res := <-ch
	require.NoError(t, res.err, "listen on %s inside the namespace", addr)
	n.mu.Lock()
	n.listeners = append(n.listeners, res.ln)
	n.mu.Unlock()
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		for {
			in, err := res.ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", addr)
			if err != nil {
				in.Close()
				continue
			}
			if !n.track(in, out) {
				return
			}
			n.wg.Add(2)
			go n.pipe(in, out)
			go n.pipe(out, in)
		}
	}()
}

// track records the connections for close; false once closing.
func (n *netNamespace) track(conns ...net.Conn) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.listeners == nil {
		for _, c := range conns {
			c.Close()
		}
		return false
	}
	n.conns = append(n.conns, conns...)
	return true
}

func (n *netNamespace) pipe(dst, src net.Conn) {
	defer n.wg.Done()
	_, _ = io.Copy(dst, src)
	if tc, ok := dst.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
}

// close stops the forwarders and waits for their goroutines.
func (n *netNamespace) close() {
	n.mu.Lock()
	for _, ln := range n.listeners {
		ln.Close()
	}
	n.listeners = nil
	for _, c := range n.conns {
		c.Close()
	}
	n.conns = nil
	n.mu.Unlock()
	n.wg.Wait()
}

// offline runs the rig's runtime in a network namespace of its own (see
// above): the fake servers served so far and later are forwarded into it,
// and when the test ends nothing may have left it.
func (r *rig) offline() {
	r.t.Helper()
	t := r.t
	n := newNetNamespace(t)
	r.ns = n
	for _, s := range r.servers {
		n.forward(t, strings.TrimPrefix(s.URL(), "http://"))
	}
	t.Cleanup(func() {
		if sent := n.transmitted(t); sent != 0 {
			t.Errorf("the runtime sent %d packet(s) to an address other than 127.0.0.1 (DNS lookups count)", sent)
		}
	})
}

// launchCommand is the runtime's command as acpdrive launches it: inside
// the rig's namespace when it runs offline.
func (r *rig) launchCommand() []string {
	if r.ns == nil {
		return r.command
	}
	return append(r.ns.prefix(), r.command...)
}
