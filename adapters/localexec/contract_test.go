package localexec

// Contract tests written once for every supported platform (Unix and
// Windows; `make test-windows` runs them under Wine). They use two
// children: the reference agent ("acpdrive agent"), for a launch and a
// turn, and this test binary re-executed as a small process tree.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/ports"
)

const (
	// contractModeEnv, when set, makes the test binary a contract helper:
	// "tree" starts a "leaf" copy of itself; each records its PID in a
	// file of the directory contractDirEnv names and then sleeps.
	contractModeEnv = "ACPDRIVE_LOCALEXEC_CONTRACT"
	contractDirEnv  = "ACPDRIVE_LOCALEXEC_CONTRACT_DIR"
	// agentEnv names a built reference agent (an acpdrive binary); when
	// unset the test builds one with the go command.
	agentEnv = "ACPDRIVE_TEST_AGENT"
)

// init plays a contract helper when the binary was started as one; it runs
// before any TestMain.
func init() {
	if mode := os.Getenv(contractModeEnv); mode != "" {
		os.Exit(runContractHelper(mode))
	}
}

func runContractHelper(mode string) int {
	dir := os.Getenv(contractDirEnv)
	if mode == "tree" {
		exe, err := os.Executable()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		c := exec.Command(exe)
		c.Env = append(os.Environ(), contractModeEnv+"=leaf")
		if err := c.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
	}
	name := filepath.Join(dir, mode+"-"+strconv.Itoa(os.Getpid()))
	if err := os.WriteFile(name, nil, 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Fprintln(os.Stderr, "helper", mode, "ready")
	time.Sleep(60 * time.Second)
	return 0
}

var (
	agentOnce sync.Once
	agentPath string
	agentErr  error
)

// referenceAgent returns the path of a reference agent binary.
func referenceAgent(t *testing.T) string {
	t.Helper()
	if p := os.Getenv(agentEnv); p != "" {
		return p
	}
	agentOnce.Do(func() {
		dir, err := os.MkdirTemp("", "localexec-agent-")
		if err != nil {
			agentErr = err
			return
		}
		agentPath = filepath.Join(dir, "acpdrive")
		if runtime.GOOS == "windows" {
			agentPath += ".exe"
		}
		out, err := exec.Command("go", "build", "-o", agentPath, "github.com/acpdrive/acpdrive/cmd/acpdrive").CombinedOutput()
		if err != nil {
			agentErr = fmt.Errorf("build the reference agent (or set %s): %v: %s", agentEnv, err, out)
		}
	})
	if agentErr != nil {
		t.Fatal(agentErr)
	}
	return agentPath
}

// startContract prepares and starts command in a fresh workspace.
func startContract(t *testing.T, l *Launcher, command []string, env ...string) ports.Process {
	t.Helper()
	pl, err := l.Prepare(ports.LaunchRequest{Command: command, Workspace: scratchDir(t)})
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	p, err := pl.Start(context.Background(), env)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return p
}

// rpc sends one request and returns its result, skipping notifications.
func rpc(t *testing.T, p ports.Process, r *bufio.Reader, id int, method string, params any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if _, err := p.Stdin().Write(append(b, '\n')); err != nil {
		t.Fatalf("write %s: %v", method, err)
	}
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatalf("read %s answer: %v", method, err)
		}
		var msg struct {
			ID     *int           `json:"id"`
			Method string         `json:"method"`
			Result map[string]any `json:"result"`
			Error  any            `json:"error"`
		}
		if err := json.Unmarshal(line, &msg); err != nil {
			t.Fatalf("undecodable line %q: %v", line, err)
		}
		if msg.ID == nil || msg.Method != "" || *msg.ID != id {
			continue
		}
		if msg.Error != nil {
			t.Fatalf("%s answered an error: %v", method, msg.Error)
		}
		return msg.Result
	}
}

// orderedTeardown runs the fixed order of docs/behaviour.md#teardown and returns
// Terminate's and Kill's errors.
func orderedTeardown(t *testing.T, p ports.Process, grace time.Duration) (termErr, killErr error) {
	t.Helper()
	_ = p.Stdin().Close()
	select {
	case <-p.Exited():
	case <-time.After(100 * time.Millisecond):
	}
	termErr = p.Terminate()
	select {
	case <-p.Exited():
	case <-time.After(grace):
	}
	killErr = p.Kill()
	_ = p.CloseStdout()
	if err := p.Release(); err != nil {
		t.Errorf("Release: %v", err)
	}
	return termErr, killErr
}

// TestContractTurn launches the reference agent, runs a turn through it
// and tears it down in order: closing stdin ends it by itself.
func TestContractTurn(t *testing.T) {
	p := startContract(t, New(Options{}), []string{referenceAgent(t), "agent"})
	if p.Identity().PID <= 0 {
		t.Fatalf("Identity().PID = %d", p.Identity().PID)
	}
	r := bufio.NewReader(p.Stdout())
	init := rpc(t, p, r, 1, "initialize", map[string]any{
		"protocolVersion":    1,
		"clientCapabilities": map[string]any{"fs": map[string]any{"readTextFile": false, "writeTextFile": false}, "terminal": false},
	})
	if v, _ := init["protocolVersion"].(float64); v != 1 {
		t.Fatalf("initialize answered protocolVersion %v", init["protocolVersion"])
	}
	sess := rpc(t, p, r, 2, "session/new", map[string]any{"cwd": scratchDir(t), "mcpServers": []any{}})
	id, _ := sess["sessionId"].(string)
	if id == "" {
		t.Fatalf("session/new answered %v", sess)
	}
	res := rpc(t, p, r, 3, "session/prompt", map[string]any{
		"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "hello from the contract test"}},
	})
	if res["stopReason"] != "end_turn" {
		t.Fatalf("session/prompt answered %v", res)
	}
	// A cancelled turn: the agent sends a chunk, then waits for
	// session/cancel (a notification), then answers the prompt with
	// stopReason cancelled.
	send := func(msg map[string]any) {
		msg["jsonrpc"] = "2.0"
		b, _ := json.Marshal(msg)
		if _, err := p.Stdin().Write(append(b, '\n')); err != nil {
			t.Fatalf("write %v: %v", msg["method"], err)
		}
	}
	send(map[string]any{"id": 4, "method": "session/prompt", "params": map[string]any{
		"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "#wait-cancel"}},
	}})
	for cancelled := false; ; {
		line, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatalf("read the cancelled turn: %v", err)
		}
		var msg struct {
			ID     *int           `json:"id"`
			Method string         `json:"method"`
			Result map[string]any `json:"result"`
		}
		if err := json.Unmarshal(line, &msg); err != nil {
			t.Fatalf("undecodable line %q: %v", line, err)
		}
		if msg.Method == "session/update" && !cancelled {
			send(map[string]any{"method": "session/cancel", "params": map[string]any{"sessionId": id}})
			cancelled = true
			continue
		}
		if msg.ID != nil && *msg.ID == 4 && msg.Method == "" {
			if msg.Result["stopReason"] != "cancelled" {
				t.Fatalf("cancelled session/prompt answered %s", line)
			}
			break
		}
	}

	_ = p.Stdin().Close()
	select {
	case <-p.Exited():
	case <-time.After(5 * time.Second):
		t.Fatal("the agent did not exit after its stdin closed")
	}
	if st := p.Exit(); !st.Exited || st.Code != 0 {
		t.Fatalf("Exit() = %+v, want a clean exit", st)
	}
	if _, killErr := orderedTeardown(t, p, time.Second); killErr != nil {
		t.Fatalf("Kill after a clean exit: %v", killErr)
	}
}

// TestContractStderrAndExitStatus checks the exit code and the stderr tail
// of a runtime that fails at once.
func TestContractStderrAndExitStatus(t *testing.T) {
	p := startContract(t, New(Options{}), []string{referenceAgent(t), "agent", "--no-such-flag"})
	select {
	case <-p.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("the agent did not exit")
	}
	st := p.Exit()
	if !st.Exited || st.Code == 0 {
		t.Fatalf("Exit() = %+v, want a failure code", st)
	}
	tail, _ := p.StderrTail()
	if !strings.Contains(string(tail), "no-such-flag") {
		t.Fatalf("stderr tail %q does not name the bad flag", tail)
	}
	orderedTeardown(t, p, time.Second)
}

// waitPIDs waits for the tree helper and its leaf to record their PIDs.
func waitPIDs(t *testing.T, dir string) (tree, leaf int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			role, pid, ok := strings.Cut(e.Name(), "-")
			n, _ := strconv.Atoi(pid)
			if ok && role == "tree" {
				tree = n
			} else if ok && role == "leaf" {
				leaf = n
			}
		}
		if tree > 0 && leaf > 0 {
			return tree, leaf
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the helper tree did not start (tree %d, leaf %d)", tree, leaf)
	return 0, 0
}

// startTree starts the test binary as a tree helper and waits for the tree.
func startTree(t *testing.T, l *Launcher) (p ports.Process, tree, leaf int) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := scratchDir(t)
	p = startContract(t, l, []string{exe}, contractModeEnv+"=tree", contractDirEnv+"="+dir)
	tree, leaf = waitPIDs(t, dir)
	if tree != p.Identity().PID {
		t.Fatalf("tree helper PID %d, Identity().PID %d", tree, p.Identity().PID)
	}
	return p, tree, leaf
}

// assertGone fails for each PID still alive.
func assertGone(t *testing.T, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for _, pid := range pids {
		for processAlive(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if processAlive(pid) {
			t.Errorf("process %d survived teardown", pid)
		}
	}
}

// TestContractTreeTeardown runs the whole order on a leader with a
// descendant: the graceful step ends both where the platform can deliver
// it, and nothing survives the force step.
func TestContractTreeTeardown(t *testing.T) {
	p, tree, leaf := startTree(t, New(Options{}))
	termErr, killErr := orderedTeardown(t, p, 3*time.Second)
	if termErr != nil {
		if !gracefulUnavailable() {
			t.Errorf("Terminate: %v", termErr)
		} else {
			t.Logf("LIMIT: the graceful signal cannot be delivered here (%v); the force step ends the tree", termErr)
		}
	} else if !gracefulUnavailable() {
		select {
		case <-p.Exited():
		default:
			t.Errorf("the leader outlived the graceful step")
		}
	}
	if killErr != nil {
		t.Errorf("Kill: %v", killErr)
	}
	assertGone(t, tree, leaf)
}

// TestContractKillTree ends a live tree with the force step alone.
func TestContractKillTree(t *testing.T) {
	p, tree, leaf := startTree(t, New(Options{}))
	start := time.Now()
	if err := p.Kill(); err != nil {
		var surv *domain.SurvivorsError
		if errors.As(err, &surv) {
			t.Fatalf("Kill left survivors: %v", surv)
		}
		t.Fatalf("Kill: %v", err)
	}
	select {
	case <-p.Exited():
	case <-time.After(2 * time.Second):
		t.Fatal("the leader was not reaped after Kill")
	}
	t.Logf("Kill ended the tree in %v; leader %+v", time.Since(start), p.Exit())
	_ = p.CloseStdout()
	if err := p.Release(); err != nil {
		t.Errorf("Release: %v", err)
	}
	assertGone(t, tree, leaf)
}

// scratchDir is t.TempDir without its failure on removal: under Wine 8.0
// the removal Go 1.26 uses on Windows fails ("Invalid function"), so a
// directory that cannot be removed is only logged.
func scratchDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "localexec-contract-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Logf("scratch directory not removed: %v", err)
		}
	})
	return dir
}
