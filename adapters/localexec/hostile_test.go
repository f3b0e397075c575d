//go:build unix

package localexec

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The test binary re-executed with helperModeEnv set is a hostile runtime
// (or one of its descendants). Each process that is ready (its signals
// set up, its group or session left, its children started) creates the
// empty file <role>-<pid> in the directory helperDirEnv names, then
// sleeps until it is killed.
const (
	helperModeEnv = "ACPDRIVE_LOCALEXEC_HELPER"
	helperDirEnv  = "ACPDRIVE_LOCALEXEC_HELPER_DIR"
	helperNodeEnv = "ACPDRIVE_LOCALEXEC_HELPER_NODE"
	helperSizeEnv = "ACPDRIVE_LOCALEXEC_HELPER_SIZE"
)

// Helper modes.
const (
	// modeSleeper is a plain descendant.
	modeSleeper = "sleeper"
	// modeLeaderSetsid leaves its group and calls setsid, as a runtime
	// that detaches itself must (a group leader cannot call setsid), then
	// starts a sleeper.
	modeLeaderSetsid = "leader-setsid"
	// modeLeaderJoinsParent moves itself into its parent's process group
	// and starts a sleeper there: neither is left in the group it was
	// started in.
	modeLeaderJoinsParent = "leader-joins-parent-group"
	// modeDoubleFork starts a middle process that starts a grandchild and
	// exits; the orphaned grandchild calls setsid.
	modeDoubleFork = "double-fork"
	modeDFMiddle   = "double-fork-middle"
	modeDFGrand    = "double-fork-grandchild"
	// modeTree is one node of a tree of helperSizeEnv processes (node i
	// starts nodes 2i+1 and 2i+2) that all ignore SIGTERM; every node
	// numbered 2 mod 3 calls setsid.
	modeTree = "tree"
	// modeClient plays the process that starts a runtime (acpdrive): it
	// starts a contained 6-process tree ignoring SIGTERM through a
	// Launcher, announces itself and sleeps until it is killed
	// (warden_linux_test.go).
	modeClient = "client"
)

// runHelper plays mode and returns the exit code (it returns only on a
// failure or for a process meant to exit).
func runHelper(mode string) int {
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "helper %s: %v\n", mode, err)
		return 2
	}
	switch mode {
	case modeSleeper:
		return ready("sleeper")
	case modeLeaderSetsid:
		if err := syscall.Setpgid(0, parentGroup()); err != nil {
			return fail(err)
		}
		if _, err := syscall.Setsid(); err != nil {
			return fail(err)
		}
		if _, err := spawn(modeSleeper); err != nil {
			return fail(err)
		}
		return ready("leader")
	case modeLeaderJoinsParent:
		if err := syscall.Setpgid(0, parentGroup()); err != nil {
			return fail(err)
		}
		if _, err := spawn(modeSleeper); err != nil {
			return fail(err)
		}
		return ready("leader")
	case modeDoubleFork:
		if _, err := spawn(modeDFMiddle); err != nil {
			return fail(err)
		}
		return ready("leader")
	case modeDFMiddle:
		pid, err := spawn(modeDFGrand)
		if err != nil {
			return fail(err)
		}
		// Exit once the grandchild is ready, orphaning it.
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if _, err := os.Stat(filepath.Join(os.Getenv(helperDirEnv), "grandchild-"+strconv.Itoa(pid))); err == nil {
				return 0
			}
			time.Sleep(5 * time.Millisecond)
		}
		return fail(fmt.Errorf("grandchild %d never got ready", pid))
	case modeDFGrand:
		if _, err := syscall.Setsid(); err != nil {
			return fail(err)
		}
		return ready("grandchild")
	case modeClient:
		return runClient()
	case modeTree:
		signal.Ignore(syscall.SIGTERM)
		node, _ := strconv.Atoi(os.Getenv(helperNodeEnv))
		size, _ := strconv.Atoi(os.Getenv(helperSizeEnv))
		if node%3 == 2 {
			if _, err := syscall.Setsid(); err != nil {
				return fail(err)
			}
		}
		for _, child := range []int{2*node + 1, 2*node + 2} {
			if child < size {
				if _, err := spawn(modeTree, helperNodeEnv+"="+strconv.Itoa(child)); err != nil {
					return fail(err)
				}
			}
		}
		return ready("node" + strconv.Itoa(node))
	}
	return fail(fmt.Errorf("unknown mode"))
}

// parentGroup is the process group of this process's parent.
func parentGroup() int {
	pg, err := syscall.Getpgid(os.Getppid())
	if err != nil {
		return 0
	}
	return pg
}

// spawn starts this binary in mode with the inherited environment (so the
// containment tag, if any, goes with it) plus env, its standard streams
// on the null device. It does not wait for it.
func spawn(mode string, env ...string) (int, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(append(os.Environ(), helperModeEnv+"="+mode), env...)
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	return cmd.Process.Pid, nil
}

// ready announces this process under role and sleeps until killed.
func ready(role string) int {
	name := filepath.Join(os.Getenv(helperDirEnv), role+"-"+strconv.Itoa(os.Getpid()))
	f, err := os.Create(name)
	if err != nil {
		fmt.Fprintf(os.Stderr, "helper %s: %v\n", role, err)
		return 2
	}
	_ = f.Close()
	for {
		time.Sleep(time.Hour)
	}
}

// helperProc is a ready helper as the test saw it.
type helperProc struct {
	role  string
	pid   int
	start uint64 // from /proc, so a reused PID is never mistaken for it
}

func (h helperProc) String() string { return h.role + "-" + strconv.Itoa(h.pid) }

// readyHelpers lists the ready files in dir.
func readyHelpers(dir string) ([]helperProc, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []helperProc
	for _, e := range entries {
		role, pidText, ok := strings.Cut(e.Name(), "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil {
			return nil, fmt.Errorf("unexpected file %q", e.Name())
		}
		out = append(out, helperProc{role: role, pid: pid})
	}
	return out, nil
}
