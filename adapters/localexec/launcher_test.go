//go:build unix

package localexec

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/proctest"
	"github.com/acpdrive/acpdrive/ports"
)

// bound is a generous limit used only to detect hangs, never to measure.
const bound = 10 * time.Second

var _ ports.Launcher = New(Options{})

// writeScript writes an executable shell script named name into dir.
func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// launch prepares and starts req (Workspace defaults to a fresh temp dir)
// and registers a full teardown as a cleanup.
func launch(t *testing.T, l *Launcher, req ports.LaunchRequest) ports.Process {
	t.Helper()
	return launchWith(t, l, req, nil, true)
}

// launchWith is launch with env for Start; checkRelease false leaves
// Release's result to the test (its first result is what every later call
// returns).
func launchWith(t *testing.T, l *Launcher, req ports.LaunchRequest, env []string, checkRelease bool) ports.Process {
	t.Helper()
	if req.Workspace == "" {
		req.Workspace = t.TempDir()
	}
	plan, err := l.Prepare(req)
	if err != nil {
		t.Fatalf("Prepare(%q): %v", req.Command, err)
	}
	p, err := plan.Start(context.Background(), env)
	if err != nil {
		t.Fatalf("Start(%q): %v", req.Command, err)
	}
	t.Cleanup(func() { teardown(t, p, checkRelease) })
	return p
}

// launchSh runs script under /bin/sh -c.
func launchSh(t *testing.T, l *Launcher, script string) ports.Process {
	t.Helper()
	return launch(t, l, ports.LaunchRequest{Command: []string{"/bin/sh", "-c", script}})
}

// teardown runs the specification's order and checks nothing survives.
func teardown(t *testing.T, p ports.Process, checkRelease bool) {
	t.Helper()
	_ = p.Terminate()
	_ = p.Stdin().Close()
	if err := p.Kill(); err != nil {
		t.Errorf("Kill: %v", err)
	}
	waitExited(t, p)
	_ = p.CloseStdout()
	if err := p.Release(); err != nil && checkRelease {
		t.Errorf("Release: %v", err)
	}
	proctest.WaitGroupEmpty(t, p.Identity().PID, bound)
}

func waitExited(t *testing.T, p ports.Process) {
	t.Helper()
	select {
	case <-p.Exited():
	case <-time.After(bound):
		t.Fatalf("process %d not reaped within %s", p.Identity().PID, bound)
	}
}

// readAll reads standard output to end of file, failing on a hang.
func readAll(t *testing.T, p ports.Process) string {
	t.Helper()
	type result struct {
		b   []byte
		err error
	}
	ch := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(p.Stdout())
		ch <- result{b, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("read stdout: %v", r.err)
		}
		return string(r.b)
	case <-time.After(bound):
		_ = p.CloseStdout() // let the reader go before failing
		<-ch
		t.Fatalf("stdout did not reach end of file within %s", bound)
		return ""
	}
}

func TestLaunchRejects(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	binDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(binDir, "not-executable"), []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", binDir)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	sh := []string{"/bin/sh", "-c", "exit 0"}

	tests := []struct {
		name      string
		ctx       context.Context
		lookPath  func(string) (string, error)
		req       ports.LaunchRequest
		atStart   bool // the error comes from Start, not Prepare
		wantKind  domain.ErrorKind
		wantMsg   string
		wantCause error // checked with errors.Is when set
	}{
		{name: "empty workspace", req: ports.LaunchRequest{Command: sh},
			wantKind: domain.KindInvalidWorkspaceCWD, wantMsg: "empty workspace path"},
		{name: "relative workspace", req: ports.LaunchRequest{Command: sh, Workspace: "some/dir"},
			wantKind: domain.KindInvalidWorkspaceCWD, wantMsg: "workspace path is not absolute"},
		{name: "dot workspace", req: ports.LaunchRequest{Command: sh, Workspace: "."},
			wantKind: domain.KindInvalidWorkspaceCWD, wantMsg: "workspace path is not absolute"},
		{name: "missing workspace", req: ports.LaunchRequest{Command: sh, Workspace: filepath.Join(tmp, "missing")},
			wantKind: domain.KindInvalidWorkspaceCWD, wantMsg: "workspace path does not exist", wantCause: os.ErrNotExist},
		{name: "workspace under a file", req: ports.LaunchRequest{Command: sh, Workspace: filepath.Join(file, "sub")},
			wantKind: domain.KindInvalidWorkspaceCWD, wantMsg: "workspace path does not exist"},
		{name: "workspace is a file", req: ports.LaunchRequest{Command: sh, Workspace: file},
			wantKind: domain.KindInvalidWorkspaceCWD, wantMsg: "workspace path is not a directory"},
		{name: "workspace checked before command", req: ports.LaunchRequest{Workspace: ""},
			wantKind: domain.KindInvalidWorkspaceCWD, wantMsg: "empty workspace path"},
		{name: "nil command", req: ports.LaunchRequest{Workspace: tmp},
			wantKind: domain.KindAgentNotFound, wantMsg: "agent command is empty or whitespace-only"},
		{name: "empty command", req: ports.LaunchRequest{Command: []string{}, Workspace: tmp},
			wantKind: domain.KindAgentNotFound, wantMsg: "agent command is empty or whitespace-only"},
		{name: "empty program", req: ports.LaunchRequest{Command: []string{"", "arg"}, Workspace: tmp},
			wantKind: domain.KindAgentNotFound, wantMsg: "agent command is empty or whitespace-only"},
		{name: "blank program", req: ports.LaunchRequest{Command: []string{" \t\n"}, Workspace: tmp},
			wantKind: domain.KindAgentNotFound, wantMsg: "agent command is empty or whitespace-only"},
		{name: "not on PATH", req: ports.LaunchRequest{Command: []string{"acpdrive-no-such-agent"}, Workspace: tmp},
			wantKind: domain.KindAgentNotFound, wantMsg: `agent command "acpdrive-no-such-agent" was not found on PATH`,
			wantCause: exec.ErrNotFound},
		{name: "on PATH but not executable", req: ports.LaunchRequest{Command: []string{"not-executable"}, Workspace: tmp},
			wantKind: domain.KindAgentNotFound, wantMsg: `agent command "not-executable" was not found on PATH`,
			wantCause: exec.ErrNotFound},
		{name: "path with slash missing", req: ports.LaunchRequest{Command: []string{filepath.Join(tmp, "agent")}, Workspace: tmp},
			wantKind: domain.KindAgentNotFound, wantMsg: `agent command "` + filepath.Join(tmp, "agent") + `" was not found`,
			wantCause: os.ErrNotExist},
		{name: "relative path with slash missing", req: ports.LaunchRequest{Command: []string{"./acpdrive-no-such-agent"}, Workspace: tmp},
			wantKind: domain.KindAgentNotFound, wantMsg: `agent command "./acpdrive-no-such-agent" was not found`,
			wantCause: os.ErrNotExist},
		{name: "workspace not UTF-8", req: ports.LaunchRequest{Command: sh, Workspace: tmp + "/\xff\xfe"},
			wantKind: domain.KindInvalidWorkspaceCWD, wantMsg: "workspace path is not valid UTF-8"},
		{name: "relative workspace not UTF-8", req: ports.LaunchRequest{Command: sh, Workspace: "dir\xc3"},
			wantKind: domain.KindInvalidWorkspaceCWD, wantMsg: "workspace path is not valid UTF-8"},
		{name: "context already done", ctx: cancelled, req: ports.LaunchRequest{Command: sh, Workspace: tmp},
			atStart: true, wantKind: domain.KindTurnCancelled, wantMsg: "session start cancelled", wantCause: context.Canceled},
		{name: "start fails", req: ports.LaunchRequest{Command: []string{"agent"}, Workspace: tmp},
			lookPath: func(string) (string, error) { return file, nil }, // exists, not executable
			atStart:  true, wantKind: domain.KindPortExit, wantMsg: "failed to start subprocess", wantCause: os.ErrPermission},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			plan, err := New(Options{LookPath: tt.lookPath}).Prepare(tt.req)
			if (err == nil) != tt.atStart {
				t.Fatalf("Prepare error = %v; want an error from Prepare: %t", err, !tt.atStart)
			}
			if err != nil && plan != nil {
				t.Errorf("Prepare returned a plan with its error")
			}
			if err == nil {
				var p ports.Process
				p, err = plan.Start(ctx, nil)
				if err == nil {
					teardown(t, p, true)
					t.Fatal("Start succeeded; want an error")
				}
				if p != nil {
					t.Errorf("Start returned a process with its error")
				}
			}
			var ae *domain.AgentError
			if !errors.As(err, &ae) {
				t.Fatalf("error %T %v is not a *domain.AgentError", err, err)
			}
			if ae.Kind != tt.wantKind || ae.Message != tt.wantMsg {
				t.Fatalf("error = %s / %q; want %s / %q", ae.Kind, ae.Message, tt.wantKind, tt.wantMsg)
			}
			if !errors.Is(err, tt.wantKind) {
				t.Errorf("errors.Is(err, %s) = false", tt.wantKind)
			}
			if tt.wantCause != nil && !errors.Is(err, tt.wantCause) {
				t.Errorf("error %v does not wrap %v", err, tt.wantCause)
			}
		})
	}
}

func TestLaunchResolvesProgram(t *testing.T) {
	binDir := t.TempDir()
	script := writeScript(t, binDir, "fake-agent", `printf '%s' "$*"`)
	t.Setenv("PATH", binDir)

	tests := []struct {
		name     string
		command  []string
		lookPath func(string) (string, error)
		want     string
	}{
		{name: "found on PATH", command: []string{"fake-agent", "a", "b c"}, want: "a b c"},
		{name: "absolute path", command: []string{script, "x"}, want: "x"},
		{name: "custom lookup", command: []string{"anything", "y"},
			lookPath: func(name string) (string, error) {
				if name != "anything" {
					return "", exec.ErrNotFound
				}
				return script, nil
			},
			want: "y"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := New(Options{LookPath: tt.lookPath})
			p := launch(t, l, ports.LaunchRequest{Command: tt.command})
			if got := readAll(t, p); got != tt.want {
				t.Fatalf("stdout = %q, want %q", got, tt.want)
			}
			waitExited(t, p)
			if got := p.Exit().String(); got != "exit status 0" {
				t.Fatalf("ExitStatus = %q", got)
			}
		})
	}
}

func TestLaunchEnvironmentAndDirectory(t *testing.T) {
	t.Setenv("ACPDRIVE_LOCALEXEC_PARENT", "from parent")
	t.Setenv("ACPDRIVE_LOCALEXEC_OVERRIDE", "parent value")
	workspace := t.TempDir()
	wantDir, err := filepath.EvalSymlinks(workspace)
	if err != nil {
		t.Fatal(err)
	}

	p := launchWith(t, New(Options{}), ports.LaunchRequest{
		Command: []string{"/bin/sh", "-c",
			`printf '%s\n' "$ACPDRIVE_LOCALEXEC_PARENT" "$ACPDRIVE_LOCALEXEC_EXTRA" "$ACPDRIVE_LOCALEXEC_OVERRIDE" "$(pwd -P)" "$PATH"`},
		Workspace: workspace,
	}, []string{"ACPDRIVE_LOCALEXEC_EXTRA=from extra", "ACPDRIVE_LOCALEXEC_OVERRIDE=extra value"}, true)
	got := strings.Split(strings.TrimSuffix(readAll(t, p), "\n"), "\n")
	want := []string{"from parent", "from extra", "extra value", wantDir, os.Getenv("PATH")}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("child saw %q, want %q", got, want)
	}
}

func TestPlanStartsRepeatedly(t *testing.T) {
	plan, err := New(Options{}).Prepare(ports.LaunchRequest{
		Command:   []string{"/bin/sh", "-c", `printf '%s' "$ACPDRIVE_LOCALEXEC_RUN"`},
		Workspace: t.TempDir(),
	})
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	if got := plan.Target(); got != (ports.Target{}) || got.Remote() {
		t.Fatalf("Target = %+v, want the local zero Target", got)
	}
	pids := map[int]bool{}
	for _, run := range []string{"first", "second"} {
		p, err := plan.Start(context.Background(), []string{"ACPDRIVE_LOCALEXEC_RUN=" + run})
		if err != nil {
			t.Fatalf("Start %s: %v", run, err)
		}
		t.Cleanup(func() { teardown(t, p, true) })
		if got := readAll(t, p); got != run {
			t.Fatalf("start %s printed %q", run, got)
		}
		id := p.Identity()
		if id.PID <= 0 || id.Host != "" || id.RemotePID != 0 {
			t.Fatalf("Identity = %+v", id)
		}
		pids[id.PID] = true
	}
	if len(pids) != 2 {
		t.Fatalf("two starts ran as %v; want two processes", pids)
	}
}
