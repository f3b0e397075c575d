//go:build windows

package localexec

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

// underWine reports whether the tests run under Wine, whose ntdll exports
// wine_get_version.
func underWine() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
}

// gracefulUnavailable reports whether CTRL_BREAK_EVENT cannot be delivered:
// Wine 8.0's GenerateConsoleCtrlEvent fails in every console set-up a
// headless run can have (see docs/windows.md).
func gracefulUnavailable() bool { return underWine() }

// leafCommand is the test binary as a single sleeping helper.
func leafCommand(t *testing.T) ([]string, string) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe}, scratchDir(t)
}

// leafPID waits for the leaf helper's PID file in dir.
func leafPID(t *testing.T, dir string) int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if pid, ok := strings.CutPrefix(e.Name(), "leaf-"); ok {
				var n int
				for _, c := range pid {
					n = n*10 + int(c-'0')
				}
				return n
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the leaf helper did not start")
	return 0
}

// TestWindowsAssignmentFailed: the child runs without a job, a Warn says
// so, and Kill still ends the leader.
func TestWindowsAssignmentFailed(t *testing.T) {
	hookAssign = func(windows.Handle, windows.Handle) error { return windows.ERROR_ACCESS_DENIED }
	defer func() { hookAssign = nil }()
	logger, h := newCaptureLogger()
	cmd, dir := leafCommand(t)
	pl, err := New(Options{Logger: logger}).Prepare(ports.LaunchRequest{Command: cmd, Workspace: scratchDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	p, err := pl.Start(context.Background(), []string{contractModeEnv + "=leaf", contractDirEnv + "=" + dir})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	if !hasRecord(h, msgAssignFailed) {
		t.Errorf("no Warn %q", msgAssignFailed)
	}
	pid := leafPID(t, dir)
	if pid != p.Identity().PID {
		t.Fatalf("leaf PID %d, Identity %d", pid, p.Identity().PID)
	}
	if err := p.Kill(); err != nil {
		t.Errorf("Kill: %v", err)
	}
	<-p.Exited()
	_ = p.CloseStdout()
	if err := p.Release(); err != nil {
		t.Errorf("Release: %v", err)
	}
	assertGone(t, pid)
}

// startNeverResumed starts the leaf helper, whose start the caller's hooks
// make fail; it checks that the child never ran and is gone.
func startNeverResumed(t *testing.T, ctx context.Context, logger *slog.Logger, pid *int) error {
	t.Helper()
	cmd, dir := leafCommand(t)
	pl, err := New(Options{Logger: logger}).Prepare(ports.LaunchRequest{Command: cmd, Workspace: scratchDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	p, err := pl.Start(ctx, []string{contractModeEnv + "=leaf", contractDirEnv + "=" + dir})
	if p != nil {
		t.Fatal("Start returned a process")
	}
	if *pid == 0 {
		t.Fatal("the hook never saw the child")
	}
	if processAlive(*pid) {
		t.Errorf("the never-resumed child %d is still alive", *pid)
	}
	time.Sleep(200 * time.Millisecond)
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the child ran: %v", entries)
	}
	return err
}

// TestWindowsResumeFailed: Warn, the child is terminated, port_exit.
func TestWindowsResumeFailed(t *testing.T) {
	var pid int
	hookResume = func(p int) error { pid = p; return windows.ERROR_ACCESS_DENIED }
	defer func() { hookResume = nil }()
	logger, h := newCaptureLogger()
	err := startNeverResumed(t, context.Background(), logger, &pid)
	if !isKind(err, domain.KindPortExit) || !strings.Contains(err.Error(), msgStartFailed) {
		t.Fatalf("Start error = %v, want port_exit %q", err, msgStartFailed)
	}
	if !hasRecord(h, msgResumeFailed) {
		t.Errorf("no Warn %q", msgResumeFailed)
	}
}

// TestWindowsCancelledBeforeResume: a ctx done when the resume is reached
// leaves the child never resumed and terminated, logs no resume warning
// and ends turn_cancelled.
func TestWindowsCancelledBeforeResume(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var pid int
	hookBeforeResume = func(p int) { pid = p; cancel() }
	defer func() { hookBeforeResume = nil }()
	logger, h := newCaptureLogger()
	err := startNeverResumed(t, ctx, logger, &pid)
	if !isKind(err, domain.KindTurnCancelled) || !strings.Contains(err.Error(), msgStartCancelled) {
		t.Fatalf("Start error = %v, want turn_cancelled %q", err, msgStartCancelled)
	}
	if hasRecord(h, msgResumeFailed) {
		t.Errorf("Warn %q logged for a cancelled start", msgResumeFailed)
	}
}

// TestWindowsBatchFileRefused: a .cmd or .bat launcher is agent_not_found
// with a message naming it.
func TestWindowsBatchFileRefused(t *testing.T) {
	for _, name := range []string{"agent.cmd", "AGENT.BAT"} {
		path := filepath.Join(scratchDir(t), name)
		if err := os.WriteFile(path, []byte("@echo off\r\n"), 0o700); err != nil {
			t.Fatal(err)
		}
		_, err := New(Options{}).Prepare(ports.LaunchRequest{Command: []string{path}, Workspace: scratchDir(t)})
		if !isKind(err, domain.KindAgentNotFound) || !strings.Contains(err.Error(), "is a batch file ("+name+")") {
			t.Errorf("Prepare(%s) error = %v, want agent_not_found naming the batch file", name, err)
		}
	}
}

// TestWindowsBackslashPath: a Windows path keeps its backslashes through
// the host splitter and resolves.
func TestWindowsBackslashPath(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	words, err := domain.SplitHostCommandLine(`"` + exe + `" --flag C:\dir\file`)
	if err != nil || len(words) != 3 || words[0] != exe || words[2] != `C:\dir\file` {
		t.Fatalf("SplitHostCommandLine = %q, %v", words, err)
	}
	if _, err := New(Options{}).Prepare(ports.LaunchRequest{Command: words, Workspace: scratchDir(t)}); err != nil {
		t.Fatalf("Prepare: %v", err)
	}
}

func isKind(err error, kind domain.ErrorKind) bool {
	k, ok := domain.KindOf(err)
	return ok && k == kind
}

// newCaptureLogger returns a logger keeping every record.
func newCaptureLogger() (*slog.Logger, *captureHandler) {
	h := &captureHandler{}
	return slog.New(h), h
}

// hasRecord reports whether a record with message msg was logged.
func hasRecord(h *captureHandler, msg string) bool {
	for _, r := range h.records() {
		if r.Message == msg {
			return true
		}
	}
	return false
}
