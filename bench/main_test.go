package bench

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"go.uber.org/goleak"

	"testing"
)

// burstFlag is the number of notifications of one benchmark op (one turn).
var burstFlag = flag.Int("burst", 100_000, "notifications per benchmark op (one #burst turn)")

// Shared by every test and benchmark; set by TestMain.
var (
	agentBin  string // the acpdrive CLI, served as `acpdrive agent`
	workspace string // the absolute directory the agents run in
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "acpdrive-bench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: temp dir:", err)
		return 1
	}
	defer os.RemoveAll(tmp)

	agentBin = filepath.Join(tmp, "acpdrive")
	workspace = filepath.Join(tmp, "ws")
	if err := os.Mkdir(workspace, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "bench: workspace:", err)
		return 1
	}
	// Built from the main module's root so the binary is exactly what
	// `make build` produces, with the main module's own go.mod.
	build := exec.Command("go", "build", "-o", agentBin, "./cmd/acpdrive")
	build.Dir = ".."
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench: building the acpdrive CLI failed:", err)
		return 1
	}

	code := m.Run()
	if code == 0 {
		// Both clients must have returned every goroutine once their
		// sessions were torn down.
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "bench: goroutines leaked:", err)
			code = 1
		}
	}
	return code
}
