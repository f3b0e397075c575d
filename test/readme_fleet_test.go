package test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// readmeFleetMarker precedes the README's fleet program.
const readmeFleetMarker = "<!-- test/readme_fleet_test.go runs the program below and compares its output with the next block -->"

// readmeFleetLines bounds the README's fleet program (issue 38: three
// tasks over two hosts, a structured result each, a retried rate-limited
// turn, the fleet's totals and a clean stop in at most 40 lines).
const readmeFleetLines = 40

// TestReadmeFleetProgram runs the README's fleet program as it stands
// (through a build overlay, so nothing is written into the repository)
// and compares its output with the block that follows it.
func TestReadmeFleetProgram(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), readmeFleetMarker)
	if !ok {
		t.Fatal("README.md holds no fleet program marker")
	}
	program, after := fenced(t, after, "```go\n")
	want, _ := fenced(t, after, "```text\n")
	if n := strings.Count(program, "\n"); n > readmeFleetLines {
		t.Errorf("the README's fleet program has %d lines, want at most %d", n, readmeFleetLines)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte(program), 0o600); err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	overlay, err := json.Marshal(map[string]map[string]string{
		"Replace": {filepath.Join(root, "internal", "readmefleet", "main.go"): src},
	})
	if err != nil {
		t.Fatal(err)
	}
	overlayPath := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlayPath, overlay, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", "-overlay", overlayPath, "./internal/readmefleet")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "TMPDIR="+dir) // the program's script file goes there
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run of the README's fleet program: %v\n%s", err, out)
	}
	if string(out) != want {
		t.Errorf("the README's fleet program printed\n%s\nthe README says\n%s", out, want)
	}
}
