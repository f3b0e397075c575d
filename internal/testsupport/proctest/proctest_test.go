//go:build linux

package proctest

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParseStat(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		want  statInfo
		valid bool
	}{
		{"plain", "123 (sleep) S 1 123 123 0 -1", statInfo{"sleep", 'S', 1, 123}, true},
		{"parent", "124 (sh) S 98 124 124 0 -1", statInfo{"sh", 'S', 98, 124}, true},
		{"zombie", "77 (sh) Z 1 70 70 0", statInfo{"sh", 'Z', 1, 70}, true},
		{"spaces in comm", "9 (my agent) R 1 5 5", statInfo{"my agent", 'R', 1, 5}, true},
		{"parens in comm", "9 (a) (b) S 1 42 42", statInfo{"a) (b", 'S', 1, 42}, true},
		{"comm ending in paren", "9 (x)) S 1 42 42", statInfo{"x)", 'S', 1, 42}, true},
		{"no comm", "9 S 1 42", statInfo{}, false},
		{"short", "9 (x) S 1", statInfo{}, false},
		{"bad pgrp", "9 (x) S 1 zz 1", statInfo{}, false},
		{"bad ppid", "9 (x) S zz 1 1", statInfo{}, false},
		{"empty", "", statInfo{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseStat([]byte(tt.in))
			if ok != tt.valid || got != tt.want {
				t.Fatalf("parseStat(%q) = %+v, %v; want %+v, %v", tt.in, got, ok, tt.want, tt.valid)
			}
		})
	}
}

// startGroup starts script under /bin/sh in a new process group and
// returns the command; the caller kills and waits.
func startGroup(t *testing.T, script string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start: %v", err)
	}
	return cmd
}

func TestGroupMembersAndWaitGroupEmpty(t *testing.T) {
	cmd := startGroup(t, "sleep 300 & sleep 300 & wait")
	pgid := cmd.Process.Pid
	t.Cleanup(func() {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		_ = cmd.Wait()
	})

	deadline := time.Now().Add(10 * time.Second)
	var members []int
	for time.Now().Before(deadline) {
		if members = GroupMembers(pgid); len(members) >= 3 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(members) < 3 || !slices.Contains(members, pgid) || !slices.IsSorted(members) {
		t.Fatalf("GroupMembers(%d) = %v; want the shell and two sleeps, sorted", pgid, members)
	}
	for _, pid := range members {
		if !Alive(pid) {
			t.Errorf("Alive(%d) = false for a running member", pid)
		}
	}

	// While the group lives, WaitGroupEmpty fails naming the survivors.
	rec := &recordingTB{TB: t}
	WaitGroupEmpty(rec, pgid, 50*time.Millisecond)
	if len(rec.errors) != 1 || !strings.Contains(rec.errors[0], "sleep 300") ||
		!strings.Contains(rec.errors[0], fmt.Sprintf("pid %d ", pgid)) {
		t.Fatalf("WaitGroupEmpty on a live group reported %q; want one failure naming the sleeps", rec.errors)
	}

	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill group: %v", err)
	}
	// The sleeps are orphans now and may stay zombies; they count as gone.
	WaitGroupEmpty(t, pgid, 10*time.Second)
}

func TestAlive(t *testing.T) {
	if !Alive(os.Getpid()) {
		t.Fatal("Alive(self) = false")
	}
	for _, pid := range []int{0, -1} {
		if Alive(pid) {
			t.Errorf("Alive(%d) = true", pid)
		}
	}

	// An exited child that has not been reaped is a zombie: not alive.
	cmd := startGroup(t, "exit 0")
	pid := cmd.Process.Pid
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if st, ok := readStat(pid); ok && st.zombie() {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if Alive(pid) {
		t.Errorf("Alive(%d) = true for a zombie", pid)
	}
	if got := GroupMembers(pid); len(got) != 0 {
		t.Errorf("GroupMembers(%d) = %v for a zombie-only group", pid, got)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("wait: %v", err)
	}
	if Alive(pid) {
		t.Errorf("Alive(%d) = true after reaping", pid)
	}
}

// recordingTB records Errorf calls instead of failing the test.
type recordingTB struct {
	testing.TB
	errors []string
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func TestLiveHasThisProcess(t *testing.T) {
	if _, err := os.Stat(procRoot); err != nil {
		t.Skip("no /proc")
	}
	got, ok := Live()[os.Getpid()]
	if !ok {
		t.Fatal("this process is not in Live()")
	}
	if got.PPID != os.Getppid() || got.PGRP != syscall.Getpgrp() {
		t.Errorf("Live() says %+v; want ppid %d pgrp %d", got, os.Getppid(), syscall.Getpgrp())
	}
}
