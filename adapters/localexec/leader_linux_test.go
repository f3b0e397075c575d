//go:build linux

package localexec

import (
	"os"
	"strconv"
	"strings"
	"testing"
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
