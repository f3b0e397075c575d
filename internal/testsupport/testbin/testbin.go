// Package testbin builds the acpdrive binary once per test process, so
// tests can drive the reference agent and the CLI as real subprocesses.
package testbin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

var (
	once     sync.Once
	binPath  string
	buildErr error
	dir      string
)

// Path returns the path of a freshly built acpdrive binary. It fails the
// test when the build fails.
func Path(t testing.TB) string {
	t.Helper()
	once.Do(build)
	if buildErr != nil {
		t.Fatalf("build acpdrive: %v", buildErr)
	}
	return binPath
}

// Cleanup removes the built binary; call it from TestMain after m.Run.
func Cleanup() {
	if dir != "" {
		_ = os.RemoveAll(dir)
	}
}

func build() {
	d, err := os.MkdirTemp("", "acpdrive-testbin-")
	if err != nil {
		buildErr = err
		return
	}
	dir = d
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	binPath = filepath.Join(d, "acpdrive")
	cmd := exec.Command("go", "build", "-o", binPath, "./cmd/acpdrive")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		buildErr = &buildError{err: err, out: string(out)}
	}
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

// Main is a TestMain for packages that drive the acpdrive binary: it runs
// the tests, removes the built binary, and fails the run when goroutines
// leaked.
func Main(m *testing.M) {
	code := m.Run()
	Cleanup()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
