//go:build linux

package localexec

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/acpdrive/acpdrive/ports"
)

// selfStatus reads one number of /proc/self/status.
func selfStatus(t *testing.T, field string) int {
	t.Helper()
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if name, value, ok := strings.Cut(line, ":"); ok && name == field {
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}

// openDescriptors counts this process's open descriptors.
func openDescriptors(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// TestLiveLeadersCostNoThread: with pidfds, a live process's reaper waits
// in the runtime's poller, so 64 live processes add no OS thread each (a
// blocked wait would add 64), and each holds at most four descriptors:
// its three pipes and the pidfd.
func TestLiveLeadersCostNoThread(t *testing.T) {
	if !pidfdUsable() {
		t.Skip("this kernel has no usable pidfds")
	}
	const n = 64
	l := New(Options{Contain: true})
	launchSh(t, l, "exit 0") // the first start's one-time work happens here
	threads, fds := selfStatus(t, "Threads"), openDescriptors(t)
	for range n {
		launchSh(t, l, "read line") // alive until its stdin closes
	}
	if grew := selfStatus(t, "Threads") - threads; grew >= n/2 {
		t.Errorf("%d live processes added %d threads", n, grew)
	}
	if grew := openDescriptors(t) - fds; grew > 4*n {
		t.Errorf("%d live processes hold %d descriptors, more than 4 each", n, grew)
	}
}

// TestRuntimeOutlivesTheThreadThatStartedIt: a runtime that asks for a
// signal when its parent ends (bwrap --die-with-parent, here setpriv
// --pdeathsig) gets it when the thread that forked it ends, not the
// process. A caller whose goroutine locked its thread and then ended,
// ending that thread, must not take the runtime with it: leaders are
// forked on a fresh goroutine, never on a caller's locked thread.
func TestRuntimeOutlivesTheThreadThatStartedIt(t *testing.T) {
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("no setpriv")
	}
	l := New(Options{Contain: true})
	plan, err := l.Prepare(ports.LaunchRequest{
		Command:   []string{setpriv, "--pdeathsig", "KILL", "--", "/bin/sh", "-c", `echo ready; read line; echo "$line"; read line`},
		Workspace: t.TempDir(),
	})
	if err != nil {
		t.Fatal(err)
	}
	type started struct {
		p     ports.Process
		tid   int
		ready string
		err   error
	}
	ch := make(chan started, 1)
	var s started
	for s.tid == 0 {
		go func() {
			runtime.LockOSThread()
			var s started
			if unix.Gettid() == unix.Getpid() {
				// The runtime never ends the main thread: try another.
				runtime.UnlockOSThread()
				ch <- s
				return
			}
			// Never unlocked: the thread ends with this goroutine.
			s.tid = unix.Gettid()
			s.p, s.err = plan.Start(context.Background(), nil)
			if s.err == nil {
				// The signal is asked for by the time the runtime speaks.
				s.ready, s.err = bufio.NewReader(s.p.Stdout()).ReadString('\n')
			}
			ch <- s
		}()
		s = <-ch
	}
	if s.p != nil {
		t.Cleanup(func() { teardown(t, s.p, true) })
	}
	if s.err != nil || s.ready != "ready\n" {
		t.Fatalf("start: %q, %v", s.ready, s.err)
	}
	// Once the thread's entry is gone, its children's parent-death
	// signals have been sent.
	task := "/proc/self/task/" + strconv.Itoa(s.tid)
	deadline := time.Now().Add(bound)
	for {
		if _, err := os.Stat(task); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("thread %d did not end within %s", s.tid, bound)
		}
		time.Sleep(time.Millisecond)
	}
	// A runtime the signal killed cannot answer.
	if _, err := io.WriteString(s.p.Stdin(), "still here\n"); err != nil {
		t.Fatalf("write: %v", err)
	}
	line, err := bufio.NewReader(s.p.Stdout()).ReadString('\n')
	if line != "still here\n" {
		t.Fatalf("the runtime answered %q, %v: it died with the thread that started it", line, err)
	}
}
