//go:build linux

package localexec

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/acpdrive/acpdrive/ports"
)

// runClient is modeClient: a process that starts a runtime and is then
// killed without a word.
func runClient() int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "client:", err)
		return 2
	}
	l := New(Options{Contain: true})
	plan, err := l.Prepare(ports.LaunchRequest{Command: []string{exe}, Workspace: os.TempDir()})
	if err != nil {
		fmt.Fprintln(os.Stderr, "client:", err)
		return 2
	}
	env := []string{helperModeEnv + "=" + modeTree, helperSizeEnv + "=6", helperNodeEnv + "=0"}
	if _, err := plan.Start(context.Background(), env); err != nil {
		fmt.Fprintln(os.Stderr, "client:", err)
		return 2
	}
	return ready("client")
}

// TestRuntimeGoesWithItsClient: a runtime whose tree ignores its stdin's
// end and SIGTERM (some of it in sessions of its own) does not outlive the
// process that started it when that process is SIGKILLed: the warden kills
// the group and the tagged tree (docs/behaviour.md#containment). Before the
// warden, all six kept running.
func TestRuntimeGoesWithItsClient(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Cleanup(func() { killHelpers(t, dir) })
	client := exec.Command(exe)
	client.Env = append(os.Environ(), helperModeEnv+"="+modeClient, helperDirEnv+"="+dir)
	client.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := client.Start(); err != nil {
		t.Fatal(err)
	}
	procs := waitReady(t, dir, 7) // the client and the six nodes
	for _, hp := range procs {
		if hp.role == "client" && hp.pid != client.Process.Pid {
			t.Fatalf("client announced as %v, started as %d", hp, client.Process.Pid)
		}
	}

	if err := client.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = client.Wait()

	// A ceiling that only means "did not survive": the warden's sweep
	// follows the client's end at once.
	deadline := time.Now().Add(time.Minute)
	for {
		var alive []helperProc
		for _, hp := range procs {
			if hp.role != "client" && aliveSame(hp) {
				alive = append(alive, hp)
			}
		}
		if len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("outlived the process that started them: %v", alive)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
