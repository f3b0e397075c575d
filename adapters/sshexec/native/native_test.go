//go:build unix

package native_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/acpdrive/acpdrive/adapters/sshexec/native"
	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/sshtest"
	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
	"github.com/acpdrive/acpdrive/ports"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

// hostile ignores TERM, HUP and stdin EOF and leaves a child behind.
const hostile = `trap '' TERM HUP; sleep 1000 & sleep 1000`

// dialCounter counts TCP dials and keeps the connections made.
type dialCounter struct {
	mu    sync.Mutex
	conns []net.Conn
}

func (d *dialCounter) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var nd net.Dialer
	c, err := nd.DialContext(ctx, network, addr)
	if err == nil {
		d.mu.Lock()
		d.conns = append(d.conns, c)
		d.mu.Unlock()
	}
	return c, err
}

func (d *dialCounter) last() net.Conn {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.conns[len(d.conns)-1]
}

func launcher(srv *sshtest.Server, mod func(*native.Options)) *native.Launcher {
	o := native.Options{Host: srv.Alias, ConfigFile: srv.ConfigFile, AgentSocket: native.NoAgent}
	if mod != nil {
		mod(&o)
	}
	return native.New(o)
}

func start(t *testing.T, l *native.Launcher, ws, command string) ports.Process {
	t.Helper()
	pl, err := l.Prepare(ports.LaunchRequest{Command: []string{command}, Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	if !pl.Target().Remote() {
		t.Fatal("plan is not remote")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p, err := pl.Start(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func waitExit(t *testing.T, p ports.Process, bound time.Duration) domain.ExitStatus {
	t.Helper()
	select {
	case <-p.Exited():
	case <-time.After(bound):
		t.Fatalf("session did not end within %v", bound)
	}
	return p.Exit()
}

// teardown runs app's order in short.
func teardown(t *testing.T, p ports.Process) {
	t.Helper()
	_ = p.Stdin().Close()
	_ = p.Terminate()
	if err := p.Kill(); err != nil {
		t.Errorf("Kill: %v", err)
	}
	_ = p.CloseStdout()
	if err := p.Release(); err != nil {
		t.Errorf("Release: %v", err)
	}
}

func TestSessionStreamsExitAndStderr(t *testing.T) {
	srv := sshtest.Start(t)
	l := launcher(srv, nil)

	p := start(t, l, srv.Workspace, "cat")
	if id := p.Identity(); id.PID != 0 || id.Host != srv.Alias {
		t.Errorf("identity %+v", id)
	}
	if _, err := io.WriteString(p.Stdin(), "hello over a channel\n"); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(p.Stdout()).ReadString('\n')
	if err != nil || line != "hello over a channel\n" {
		t.Fatalf("read %q, %v", line, err)
	}
	_ = p.Stdin().Close() // EOF ends cat
	if st := waitExit(t, p, 10*time.Second); st.Code != 0 || st.Signal != "" {
		t.Errorf("exit %+v", st)
	}
	if err := p.Release(); err != nil {
		t.Error(err)
	}

	p = start(t, l, srv.Workspace, `echo "first words" >&2; pwd >&2; exit 3`)
	st := waitExit(t, p, 10*time.Second)
	tail, cut := p.StderrTail()
	if st.Code != 3 || cut || string(tail) != "first words\n"+srv.Workspace+"\n" {
		t.Errorf("exit %+v, stderr %q (cut %v)", st, tail, cut)
	}
	teardown(t, p)

	// A program that is not there: 127 and the remote shell's message.
	p = start(t, l, srv.Workspace, "acpdrive-no-such-program --acp")
	st = waitExit(t, p, 10*time.Second)
	tail, _ = p.StderrTail()
	if st.Code != 127 || !strings.Contains(string(tail), "not found") {
		t.Errorf("exit %+v, stderr %q", st, tail)
	}
	teardown(t, p)
}

func TestPassEnvTravelsInThePreamble(t *testing.T) {
	srv := sshtest.Start(t)
	l := launcher(srv, func(o *native.Options) {
		o.PassEnv = []string{"ACPDRIVE_SECRET"}
		o.LookupEnv = func(n string) (string, bool) {
			if n == "ACPDRIVE_SECRET" {
				return "it's $ecret", true
			}
			return "", false
		}
	})
	p := start(t, l, srv.Workspace, `printf '%s\n' "$ACPDRIVE_SECRET"; cat`)
	r := bufio.NewReader(p.Stdout())
	line, err := r.ReadString('\n')
	if err != nil || line != "it's $ecret\n" {
		t.Fatalf("read %q, %v", line, err)
	}
	// The first protocol byte after the preamble reaches the runtime.
	if _, err := io.WriteString(p.Stdin(), "{}\n"); err != nil {
		t.Fatal(err)
	}
	if line, err = r.ReadString('\n'); err != nil || line != "{}\n" {
		t.Fatalf("read %q, %v", line, err)
	}
	teardown(t, p)
}

func TestSessionsShareOneConnection(t *testing.T) {
	srv := sshtest.Start(t)
	dc := &dialCounter{}
	l := launcher(srv, func(o *native.Options) { o.Dial = dc.dial })

	a := start(t, l, srv.Workspace, "cat")
	b := start(t, l, srv.Workspace, "cat")
	if n := l.Handshakes(); n != 1 {
		t.Errorf("two sessions made %d handshakes, want 1", n)
	}
	teardown(t, a)
	// b still runs on the connection a released.
	if _, err := io.WriteString(b.Stdin(), "still here\n"); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(b.Stdout()).ReadString('\n'); err != nil || line != "still here\n" {
		t.Fatalf("read %q, %v", line, err)
	}
	teardown(t, b)
	// The last release closed the connection; the next session dials again.
	c := start(t, l, srv.Workspace, "cat")
	if n := l.Handshakes(); n != 2 {
		t.Errorf("after the connection closed: %d handshakes, want 2", n)
	}
	teardown(t, c)
}

func TestKillEndsTheRemoteGroupOnASharedConnection(t *testing.T) {
	srv := sshtest.Start(t)
	l := launcher(srv, nil)
	keeper := start(t, l, srv.Workspace, "cat") // keeps the connection up
	keeperDone := false
	t.Cleanup(func() {
		if !keeperDone {
			teardown(t, keeper)
		}
	})
	p := start(t, l, srv.Workspace, hostile)
	time.Sleep(300 * time.Millisecond) // let the children start
	if len(srv.RemoteProcs(t)) == 0 {
		t.Fatal("no remote process seen")
	}
	teardown(t, p)
	if st := p.Exit(); !st.Exited {
		t.Errorf("exit %+v", st)
	}
	// Only keeper's cat (and its wrapper) may be left.
	deadline := time.Now().Add(5 * time.Second)
	for {
		var left []sshtest.Proc
		for _, pr := range srv.RemoteProcs(t) {
			if strings.Contains(pr.Cmdline, "sleep 1000") {
				left = append(left, pr)
			}
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("survivors on the remote host: %v", left)
		}
		time.Sleep(100 * time.Millisecond)
	}
	keeperDone = true
	teardown(t, keeper)
	if left := srv.WaitNoRemoteProcs(t, 5*time.Second); len(left) > 0 {
		t.Errorf("left on the remote host: %v", left)
	}
}

func TestDroppedConnectionEndsTheSession(t *testing.T) {
	srv := sshtest.Start(t)
	dc := &dialCounter{}
	l := launcher(srv, func(o *native.Options) { o.Dial = dc.dial })
	p := start(t, l, srv.Workspace, hostile)
	time.Sleep(300 * time.Millisecond)
	_ = dc.last().Close()
	st := waitExit(t, p, 5*time.Second)
	if st.Code != 255 || !strings.Contains(st.Message, "connection") {
		t.Errorf("exit %+v, want 255 and the reason", st)
	}
	// Writes fail instead of hanging.
	done := make(chan error, 1)
	go func() { _, err := p.Stdin().Write([]byte("x\n")); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a write on a dropped connection succeeded")
		}
	case <-time.After(2 * time.Second):
		t.Error("a write on a dropped connection hung")
	}
	teardown(t, p)
	if left := srv.WaitNoRemoteProcs(t, 8*time.Second); len(left) > 0 {
		t.Errorf("left on the remote host after the drop: %v", left)
	}
}

func startErr(t *testing.T, l *native.Launcher, ws string) error {
	t.Helper()
	pl, err := l.Prepare(ports.LaunchRequest{Command: []string{"cat"}, Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p, err := pl.Start(ctx, nil)
	if err == nil {
		teardown(t, p)
		return nil
	}
	if k, _ := domain.KindOf(err); k != domain.KindPortExit {
		t.Errorf("kind %q, want port_exit: %v", k, err)
	}
	return err
}

func TestHostKeyPolicies(t *testing.T) {
	srv := sshtest.Start(t)

	// accept-new with nothing known adds the key, then uses it.
	srv.SetKnownHosts(t, "")
	l := launcher(srv, nil)
	if err := startErr(t, l, srv.Workspace); err != nil {
		t.Fatalf("accept-new refused an unknown key: %v", err)
	}
	b, _ := os.ReadFile(srv.KnownHosts)
	fields := strings.Fields(srv.HostKey)
	if !strings.Contains(string(b), fields[1]) {
		t.Errorf("known_hosts after accept-new: %q", b)
	}

	// yes refuses an unknown key.
	srv.SetKnownHosts(t, "")
	l = launcher(srv, func(o *native.Options) { o.StrictHostKeyChecking = "yes" })
	err := startErr(t, l, srv.Workspace)
	var hk *native.HostKeyError
	if !errors.As(err, &hk) || hk.Changed {
		t.Errorf("yes with an unknown key: %v", err)
	}
	if native.Unreachable(err) {
		t.Error("a refused key reads as unreachable")
	}

	// A changed key is refused under accept-new, saying so.
	other := "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGb8xvO1D1vv6vBKdFJmCQn5fKyPcxSHddPpPcAHEJ6D"
	srv.SetKnownHosts(t, srv.KnownHostsLine(other))
	l = launcher(srv, nil)
	err = startErr(t, l, srv.Workspace)
	if !errors.As(err, &hk) || !hk.Changed || !strings.Contains(err.Error(), "host key for [127.0.0.1]:") ||
		!strings.Contains(err.Error(), "changed") {
		t.Errorf("changed key: %v", err)
	}

	// no accepts it.
	l = launcher(srv, func(o *native.Options) { o.StrictHostKeyChecking = "no" })
	if err := startErr(t, l, srv.Workspace); err != nil {
		t.Errorf("no refused a key: %v", err)
	}
}

func TestUnreachablePort(t *testing.T) {
	srv := sshtest.Start(t)
	l := native.New(native.Options{Host: srv.DownAlias, ConfigFile: srv.ConfigFile, AgentSocket: native.NoAgent})
	err := startErr(t, l, srv.Workspace)
	if err == nil || !native.Unreachable(err) || !strings.Contains(err.Error(), native.MsgConnectFailed) {
		t.Errorf("unreachable port: %v", err)
	}
}

// TestStopPromptAfterOwnExit: a runtime that exits on stdin EOF is
// stopped without waiting out a bound. The wrapper's watchdog is left an
// orphan in the group once the runtime has ended; killed, it stays a
// zombie until the remote init reaps it, which must not hold the stop: the
// group kill ends as soon as nothing of the group runs, and Kill does not
// wait out its window for a channel that already ended.
//
// It asserts what the transport guarantees, not how fast this machine or
// the remote account is: every channel starts the account's login shell,
// whose start-up files may take seconds (root's often do, under load more
// so), and the group kill runs on a channel of its own.
func TestStopPromptAfterOwnExit(t *testing.T) {
	srv := sshtest.Start(t)
	logs := &syncBuffer{}
	l := launcher(srv, func(o *native.Options) {
		o.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	for i := range 2 {
		logs.reset()
		p := start(t, l, srv.Workspace, "cat >/dev/null")
		_ = p.Stdin().Close()
		select {
		case <-p.Exited():
		case <-time.After(20 * time.Second): // a wait for what must happen, not a bound under test
			t.Fatal("the runtime did not exit after stdin EOF")
		}
		if err := p.Kill(); err != nil {
			t.Fatal(err)
		}
		if err := p.Release(); err != nil {
			t.Fatal(err)
		}
		out := logs.String()
		if strings.Contains(out, "the session channel had not ended after the force kill") {
			t.Errorf("session %d: Kill waited out its window for a channel that had ended:\n%s", i, out)
		}
		rounds, ok := killRounds(out)
		switch {
		case ok && rounds >= native.KillRounds/2:
			// Killed members that keep the loop going this long are
			// zombies waiting for a reaper, not live processes.
			t.Errorf("session %d: the group kill went on for %d of %d rounds:\n%s", i, rounds, native.KillRounds, out)
		case !ok && !strings.Contains(out, "could not kill the remote process group"):
			t.Errorf("session %d: the group kill reported nothing:\n%s", i, out)
		case !ok:
			// The remote shell did not even start within the kill's bound
			// (a slow login on a loaded machine): the watchdog ends the
			// group, which the check below waits for.
			t.Logf("session %d: the group kill missed its bound: %s", i, out)
		}
	}
	if left := srv.WaitNoRemoteProcs(t, 5*time.Second); len(left) > 0 {
		t.Errorf("remote processes left: %v", left)
	}
}

// killRounds reads the rounds of the group kill from the transport's log.
func killRounds(log string) (int, bool) {
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, `msg="remote process group killed"`) {
			continue
		}
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, "rounds="); ok {
				n, err := strconv.Atoi(v)
				return n, err == nil
			}
		}
	}
	return 0, false
}

// syncBuffer is a log sink safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.Reset()
}
