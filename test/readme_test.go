package test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// readmeMarker precedes the README's orchestrator program.
const readmeMarker = "<!-- test/readme_test.go runs the program below and compares its output with the next block -->"

// readmeProgramLines bounds the README's orchestrator program (issue 28:
// two turns, a cancel, totals and a stop in under 50 lines).
const readmeProgramLines = 50

// TestReadmeOrchestratorProgram runs the README's orchestrator program as
// it stands (through a build overlay, so nothing is written into the
// repository) and compares its output with the block that follows it: the
// program in the README cannot rot.
func TestReadmeOrchestratorProgram(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), readmeMarker)
	if !ok {
		t.Fatal("README.md holds no orchestrator program marker")
	}
	program, after := fenced(t, after, "```go\n")
	want, _ := fenced(t, after, "```text\n")
	if n := strings.Count(program, "\n"); n >= readmeProgramLines {
		t.Errorf("the README's orchestrator program has %d lines, want under %d", n, readmeProgramLines)
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
		"Replace": {filepath.Join(root, "internal", "readmeprogram", "main.go"): src},
	})
	if err != nil {
		t.Fatal(err)
	}
	overlayPath := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlayPath, overlay, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", "-overlay", overlayPath, "./internal/readmeprogram")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run of the README's program: %v\n%s", err, out)
	}
	if string(out) != want {
		t.Errorf("the README's program printed\n%s\nthe README says\n%s", out, want)
	}
}

// fenced returns the body of the first fenced block opening with open in
// s, and what follows it.
func fenced(t *testing.T, s, open string) (body, rest string) {
	t.Helper()
	_, after, ok := strings.Cut(s, open)
	if !ok {
		t.Fatalf("no %q block", strings.TrimSpace(open))
	}
	body, rest, ok = strings.Cut(after, "```\n")
	if !ok {
		t.Fatalf("an unclosed %q block", strings.TrimSpace(open))
	}
	return body, rest
}
