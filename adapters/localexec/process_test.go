//go:build unix

package localexec

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/proctest"
	"github.com/acpdrive/acpdrive/ports"
)

// readLine reads one line of standard output, failing on a hang. The
// reader is returned for further reads.
func readLine(t *testing.T, p ports.Process) (string, *bufio.Reader) {
	t.Helper()
	br := bufio.NewReader(p.Stdout())
	ch := make(chan string, 1)
	go func() {
		s, _ := br.ReadString('\n')
		ch <- s
	}()
	select {
	case s := <-ch:
		return s, br
	case <-time.After(bound):
		_ = p.CloseStdout()
		<-ch
		t.Fatalf("no line on stdout within %s", bound)
		return "", nil
	}
}

// waitMembers waits until the group has at least n live members.
func waitMembers(t *testing.T, pgid, n int) []int {
	t.Helper()
	deadline := time.Now().Add(bound)
	for {
		m := proctest.GroupMembers(pgid)
		if len(m) >= n {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("group %d has members %v, want at least %d", pgid, m, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestExitStatus(t *testing.T) {
	tests := []struct {
		script     string
		want       domain.ExitStatus
		wantString string
	}{
		{"exit 0", domain.ExitStatus{Exited: true, Code: 0}, "exit status 0"},
		{"exit 3", domain.ExitStatus{Exited: true, Code: 3}, "exit status 3"},
		{"kill -KILL $$", domain.ExitStatus{Exited: true, Code: -1, Signal: "killed"}, "signal: killed"},
		{"kill -TERM $$", domain.ExitStatus{Exited: true, Code: -1, Signal: "terminated"}, "signal: terminated"},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			p := launchSh(t, New(Options{}), tt.script)
			waitExited(t, p)
			if got := p.Exit(); got != tt.want {
				t.Errorf("Exit = %+v, want %+v", got, tt.want)
			}
			if got := p.Exit().String(); got != tt.wantString {
				t.Errorf("Exit().String() = %q, want %q", got, tt.wantString)
			}
		})
	}
}

func TestStdinAndStatusBeforeExit(t *testing.T) {
	p := launchSh(t, New(Options{}), `read line; echo "got $line"; read rest; echo "eof $?"`)
	if got := p.Exit(); got != (domain.ExitStatus{}) {
		t.Fatalf("before exit: Exit = %+v, want the zero ExitStatus", got)
	}
	if _, err := p.Stdin().Write([]byte("hello\n")); err != nil {
		t.Fatalf("write stdin: %v", err)
	}
	if line, _ := readLine(t, p); line != "got hello\n" {
		t.Fatalf("first line = %q", line)
	}
	if err := p.Stdin().Close(); err != nil {
		t.Fatalf("close stdin: %v", err)
	}
	if err := p.Stdin().Close(); err != nil {
		t.Fatalf("second close of stdin: %v", err)
	}
	if rest := readAll(t, p); rest != "eof 1\n" {
		t.Fatalf("after closing stdin the child printed %q", rest)
	}
	waitExited(t, p)
	if got := p.Exit(); got != (domain.ExitStatus{Exited: true, Code: 0}) {
		t.Fatalf("Exit = %+v", got)
	}
}

func TestProcessGroupTeardown(t *testing.T) {
	tests := []struct {
		name string
		// The script starts two grandchildren, says "ready" and waits.
		script string
		// survivesTerm: the child ignores SIGTERM (and so, inheriting the
		// disposition, do its children).
		survivesTerm bool
		wantStatus   string
	}{
		{"ignores SIGTERM", `trap '' TERM; sleep 300 & sleep 300 & echo ready; wait`, true, "signal: killed"},
		{"exits on SIGTERM", `trap 'exit 0' TERM; sleep 300 & sleep 300 & echo ready; wait`, false, "exit status 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := launchSh(t, New(Options{}), tt.script)
			pgid := p.Identity().PID
			if line, _ := readLine(t, p); line != "ready\n" {
				t.Fatalf("first line = %q", line)
			}
			members := waitMembers(t, pgid, 3)
			if !slices.Contains(members, p.Identity().PID) {
				t.Fatalf("child %d is not in its own group %d: %v", p.Identity().PID, pgid, members)
			}
			if own := proctest.GroupMembers(os.Getpid()); slices.Contains(own, p.Identity().PID) {
				t.Fatalf("child shares the test's process group")
			}

			if err := p.Terminate(); err != nil {
				t.Fatalf("Terminate: %v", err)
			}
			if tt.survivesTerm {
				select {
				case <-p.Exited():
					t.Fatalf("child exited on SIGTERM it ignores: %s", p.Exit().String())
				case <-time.After(100 * time.Millisecond):
				}
				if !proctest.Alive(p.Identity().PID) {
					t.Fatalf("child died on SIGTERM it ignores")
				}
			} else {
				waitExited(t, p)
			}

			if err := p.Kill(); err != nil {
				t.Fatalf("Kill: %v", err)
			}
			// Kill returns only once no live member remains.
			if left := proctest.GroupMembers(pgid); len(left) != 0 {
				t.Fatalf("after Kill the group still has %v", left)
			}
			waitExited(t, p)
			if got := p.Exit().String(); got != tt.wantStatus {
				t.Errorf("ExitStatus = %q, want %q", got, tt.wantStatus)
			}
			// Teardown steps are idempotent once the group is gone.
			if err := p.Terminate(); err != nil {
				t.Errorf("Terminate after Kill: %v", err)
			}
			if err := p.Kill(); err != nil {
				t.Errorf("second Kill: %v", err)
			}
			if err := p.CloseStdout(); err != nil {
				t.Errorf("CloseStdout: %v", err)
			}
			if err := p.Release(); err != nil {
				t.Errorf("Release: %v", err)
			}
			if err := p.Release(); err != nil {
				t.Errorf("second Release: %v", err)
			}
		})
	}
}

func TestExitWhileDescendantHoldsStdout(t *testing.T) {
	p := launchSh(t, New(Options{}), `sleep 300 & echo started; exit 0`)
	line, br := readLine(t, p)
	if line != "started\n" {
		t.Fatalf("first line = %q", line)
	}
	// The child is reaped although the grandchild holds standard output.
	waitExited(t, p)
	if got := p.Exit().String(); got != "exit status 0" {
		t.Fatalf("ExitStatus = %q", got)
	}

	type result struct {
		n   int
		err error
	}
	read := make(chan result, 1)
	go func() {
		n, err := br.Read(make([]byte, 1))
		read <- result{n, err}
	}()
	select {
	case r := <-read:
		t.Fatalf("stdout read returned (%d, %v) while a descendant holds the write end", r.n, r.err)
	case <-time.After(200 * time.Millisecond):
	}

	if err := p.CloseStdout(); err != nil {
		t.Fatalf("CloseStdout: %v", err)
	}
	select {
	case r := <-read:
		if r.err == nil {
			t.Fatalf("read after CloseStdout returned %d bytes and no error", r.n)
		}
	case <-time.After(bound):
		t.Fatalf("CloseStdout did not unblock the reader within %s", bound)
	}
	if err := p.CloseStdout(); err != nil {
		t.Fatalf("second CloseStdout: %v", err)
	}
	if !slices.ContainsFunc(proctest.GroupMembers(p.Identity().PID), func(pid int) bool { return pid != p.Identity().PID }) {
		t.Fatalf("the grandchild is gone before Kill; the test proves nothing")
	}
	if err := p.Kill(); err != nil {
		t.Fatalf("Kill: %v", err)
	}
}

func TestStderrTail(t *testing.T) {
	var lines strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&lines, "line %d\n", i)
	}
	all := lines.String()
	tests := []struct {
		name          string
		script        string
		want          string
		wantTruncated bool
	}{
		{"none", `exit 0`, "", false},
		{"small", `printf 'oops\nbad thing\n' >&2; exit 1`, "oops\nbad thing\n", false},
		{"exactly 8 KiB", `head -c 8192 /dev/zero | tr '\0' x >&2`, strings.Repeat("x", 8192), false},
		{"over 8 KiB", `i=0; while [ $i -lt 2000 ]; do echo "line $i"; i=$((i+1)); done >&2`,
			all[len(all)-8192:], true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := launchSh(t, New(Options{}), tt.script)
			waitExited(t, p)
			if err := p.Release(); err != nil { // drains standard error
				t.Fatalf("Release: %v", err)
			}
			tail, truncated := p.StderrTail()
			if string(tail) != tt.want || truncated != tt.wantTruncated {
				t.Fatalf("StderrTail = %d bytes %q…, truncated %v; want %d bytes, truncated %v",
					len(tail), head(tail), truncated, len(tt.want), tt.wantTruncated)
			}
		})
	}
}

func head(b []byte) string {
	if len(b) > 40 {
		b = b[:40]
	}
	return string(b)
}

func TestReleaseBounded(t *testing.T) {
	tests := []struct {
		name    string
		script  string
		kill    bool // Kill before Release, as the teardown order does
		wantErr string
	}{
		// The grandchild keeps standard error open after the child exits.
		{"descendant holds stderr", `sleep 300 >/dev/null & echo gone >&2; exit 0`, false, ""},
		// Out of order: the child is still running at Release.
		{"child still running", `echo up; exec sleep 300`, false, "had not exited at release"},
		{"after kill", `sleep 300 & exec sleep 300`, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &captureHandler{}
			p := launchWith(t, New(Options{Logger: slog.New(h)}),
				ports.LaunchRequest{Command: []string{"/bin/sh", "-c", tt.script}}, nil, tt.wantErr == "")
			waitMembers(t, p.Identity().PID, 1)
			if tt.kill {
				if err := p.Kill(); err != nil {
					t.Fatalf("Kill: %v", err)
				}
			}
			if tt.wantErr == "" && !tt.kill {
				waitExited(t, p)
			}
			done := make(chan error, 1)
			go func() { done <- p.Release() }()
			var err error
			select {
			case err = <-done:
			case <-time.After(bound):
				t.Fatalf("Release did not return within %s", bound)
			}
			if tt.wantErr == "" && err != nil {
				t.Fatalf("Release: %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Release error = %v, want one containing %q", err, tt.wantErr)
			}
			if again := p.Release(); again != err {
				t.Fatalf("second Release = %v, first %v", again, err)
			}
			var warns []string
			for _, rec := range h.records() {
				if rec.Level >= slog.LevelWarn {
					warns = append(warns, rec.Message)
				}
			}
			wantWarns := []string(nil)
			if tt.wantErr != "" {
				wantWarns = []string{"agent process not reaped at release"}
			}
			if !slices.Equal(warns, wantWarns) {
				t.Fatalf("warnings %q, want %q", warns, wantWarns)
			}
			if err := p.Stdin().Close(); err != nil {
				t.Fatalf("closing stdin after Release: %v", err)
			}
			if tt.name == "descendant holds stderr" {
				if tail, _ := p.StderrTail(); string(tail) != "gone\n" {
					t.Fatalf("StderrTail = %q", tail)
				}
			}
			// Cleanup kills what is left and checks the group empties.
		})
	}
}

func TestConcurrentTeardown(t *testing.T) {
	// Contain is a no-op off Linux; on Linux it adds the tree scans.
	for _, contain := range []bool{false, true} {
		t.Run(map[bool]string{false: "uncontained", true: "contained"}[contain], func(t *testing.T) {
			p := launchSh(t, New(Options{Contain: contain}), `sleep 300 & sleep 300 & echo ready; wait`)
			if line, _ := readLine(t, p); line != "ready\n" {
				t.Fatalf("first line = %q", line)
			}
			var wg sync.WaitGroup
			for range 4 {
				wg.Go(func() {
					_ = p.Terminate()
					_ = p.Stdin().Close()
					if err := p.Kill(); err != nil {
						t.Errorf("Kill: %v", err)
					}
					<-p.Exited()
					_ = p.Exit()
					_, _ = p.StderrTail()
					_ = p.CloseStdout()
					if err := p.Release(); err != nil {
						t.Errorf("Release: %v", err)
					}
				})
			}
			wg.Wait()
			proctest.WaitGroupEmpty(t, p.Identity().PID, bound)
		})
	}
}

func TestStderrLinesLoggedAtDebug(t *testing.T) {
	tests := []struct {
		name  string
		level slog.Level
		want  []string
	}{
		{"debug enabled", slog.LevelDebug, []string{"first", "second"}},
		{"info only", slog.LevelInfo, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &levelHandler{captureHandler: &captureHandler{}, min: tt.level}
			p := launchSh(t, New(Options{Logger: slog.New(h)}), `printf 'first\nsecond' >&2`)
			waitExited(t, p)
			if err := p.Release(); err != nil {
				t.Fatalf("Release: %v", err)
			}
			var got []string
			for _, rec := range h.records() {
				if rec.Message != "agent stderr line" {
					t.Fatalf("unexpected log %q", rec.Message)
				}
				a := attrs(rec)
				if a["pid"] != int64(p.Identity().PID) {
					t.Errorf("pid attr = %v", a["pid"])
				}
				got = append(got, a["line"].(string))
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("logged lines %q, want %q", got, tt.want)
			}
		})
	}
}

// levelHandler captures records at or above min.
type levelHandler struct {
	*captureHandler
	min slog.Level
}

func (h *levelHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.min }
