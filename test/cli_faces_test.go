package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIHoldsNoOrchestration: acpdrive run and batch are faces over the
// library's fleet and run (docs/behaviour.md#fleet): no placement, turn
// loop, host key or retry machinery of their own, and no ports import,
// remain in cmd/acpdrive.
func TestCLIHoldsNoOrchestration(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "cmd", "acpdrive", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	forbidden := []string{
		`"` + module + `/ports"`, // the ports package
		"app.NewHost",            // processes shared by hand
		"app.Retrier{",           // retries by hand
		"app.HostKey",            // host keys
		"app.MsgHostNeedsClose",  // a message comparison
		".TurnWithResult(",       // a turn loop
		".Turn(ctx",              // a turn loop
		"app.Start(",             // a session placed by hand
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range forbidden {
			if strings.Contains(string(src), s) {
				t.Errorf("%s holds %s: orchestration belongs to the library's Fleet and Run", filepath.Base(f), s)
			}
		}
	}
}
