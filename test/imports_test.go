package test

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
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
	case strings.HasPrefix(r, "adapters/internal/"):
		return "adapters/internal"
	case strings.HasPrefix(r, "adapters/"):
		parts := strings.SplitN(r, "/", 3)
		return "adapters/" + parts[1]
	case strings.HasPrefix(r, "internal/testsupport/"):
		return "testsupport"
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
	if msg := otelViolation(from, imp); msg != "" {
		return msg
	}
	if !strings.HasPrefix(imp, module) {
		return ""
	}
	to := layer(imp)
	switch {
	case to == "testsupport" && from != "testsupport" && !strings.HasPrefix(from, "test/") && from != "test":
		return "production code never imports the test support (internal/testsupport)"
	case from == "testsupport" && (to == "app" || to == "wiring" || to == "cmd"):
		return "the test support never imports app, wiring or cmd"
	case from == "adapters/internal" && strings.HasPrefix(to, "adapters/") && to != from:
		return "the adapters' shared kit (adapters/internal) imports no adapter"
	case to == "adapters/internal" && !strings.HasPrefix(from, "adapters/"):
		return "only adapters import the adapters' shared kit (adapters/internal)"
	case strings.HasPrefix(from, "adapters/") && strings.HasPrefix(to, "adapters/") && to != from && to != "adapters/internal":
		return "an adapter never imports another adapter"
	case strings.HasPrefix(from, "adapters/") && (to == "app" || to == "wiring" || to == "cmd"):
		return "an adapter never imports app, wiring or cmd"
	case (from == "ports" || strings.HasPrefix(from, "protocol/") || from == "app") &&
		(strings.HasPrefix(to, "adapters/") || to == "wiring" || to == "cmd"):
		return "the inner layers never import adapters, wiring or cmd"
	case from == "ports" && to != "domain" && to != "ports":
		return "ports/ imports the domain and the standard library only"
	case from == "refagent" && to != "refagent":
		return "the reference agent stays independent of the client it tests"
	}
	return ""
}

// otelModule is the OpenTelemetry import path prefix.
const otelModule = "go.opentelemetry.io/"

// otelViolation keeps OpenTelemetry at the edge
// (docs/behaviour.md#observability): the API only in its adapter
// (adapters/otelobserve), wiring and cmd; the SDK, the exporters and the
// OTLP types only in cmd, which sets up the export.
func otelViolation(from, imp string) string {
	if !strings.HasPrefix(imp, otelModule) {
		return ""
	}
	sdk := strings.HasPrefix(imp, otelModule+"otel/sdk") || strings.HasPrefix(imp, otelModule+"otel/exporters") ||
		strings.HasPrefix(imp, otelModule+"proto")
	switch {
	case from == "cmd":
		return ""
	case sdk:
		return "only cmd/ imports the OpenTelemetry SDK and exporters"
	case from != "adapters/otelobserve" && from != "wiring":
		return "only adapters/otelobserve, wiring/ and cmd/ import the OpenTelemetry API"
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
		{"ports", module + "/protocol/acpwire", true},
		{"ports", module + "/domain", false},
		{"adapters/sshexec", module + "/adapters/localexec", true},
		{"adapters/otelobserve", otelModule + "otel/trace", false},
		{"adapters/otelobserve", otelModule + "otel/sdk/trace", true},
		{"wiring", otelModule + "otel/metric", false},
		{"cmd", otelModule + "otel/exporters/otlp/otlptrace/otlptracehttp", false},
		{"app", otelModule + "otel/trace", true},
		{"ports", otelModule + "otel", true},
		{"adapters/localexec", otelModule + "otel", true},
		{"adapters/localexec", module + "/adapters/internal/journaltail", false},
		{"adapters/internal", module + "/adapters/localexec", true},
		{"app", module + "/adapters/internal/journaltail", true},
		{"app", module + "/internal/testsupport/eventrec", true},
		{"cmd", module + "/internal/testsupport/testbin", true},
		{"adapters/localexec", module + "/internal/testsupport/proctest", true},
		{"testsupport", module + "/internal/testsupport/proctest", false},
		{"testsupport", module + "/app", true},
		{"test/faults", module + "/internal/testsupport/proctest", false},
		{"adapters/sshexec", module + "/adapters/internal/procio", false},
		{"adapters/inprocess", module + "/adapters/internal/procio", false},
		{"app", module + "/adapters/internal/procio", true},
		{"adapters/internal", module + "/adapters/localexec", true},
	}
	for _, c := range cases {
		got := violation(c.from, c.imp) != ""
		if got != c.bad {
			t.Errorf("violation(%q, %q) = %t, want %t", c.from, c.imp, got, c.bad)
		}
	}
}

// TestAppAPISpeaksTheDomain checks that app's exported API (every exported
// name, signature and field, as `go doc -all` prints it) mentions no wire
// or connection type: an orchestrator never imports protocol/.
func TestAppAPISpeaksTheDomain(t *testing.T) {
	cmd := exec.Command("go", "doc", "-all", "-short=false", "./app")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		cmd = exec.Command("go", "doc", "-all", "./app")
		cmd.Dir = ".."
		if out, err = cmd.Output(); err != nil {
			t.Fatalf("go doc ./app: %v", err)
		}
	}
	if len(out) < 1000 {
		t.Fatalf("go doc printed only %d bytes", len(out))
	}
	for i, line := range strings.Split(string(out), "\n") {
		for _, pkg := range []string{"acpwire.", "jsonrpc.", "acpclient."} {
			if strings.Contains(line, pkg) && !strings.HasPrefix(strings.TrimSpace(line), "//") {
				t.Errorf("app's exported API mentions %s (line %d: %q)", strings.TrimSuffix(pkg, "."), i+1, strings.TrimSpace(line))
			}
		}
	}
}

// TestAppHoldsNoPackageState checks that app declares no package-level
// variable (an interface assertion `var _ T = v` excepted): every piece of
// state belongs to a Session or is injected.
func TestAppHoldsNoPackageState(t *testing.T) {
	for _, msg := range packageVars(t, "../app") {
		t.Error(msg)
	}
}

// packageVars lists the package-level variables of the non-test files in
// dir, blank ones excepted.
func packageVars(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	fset := token.NewFileSet()
	var out []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("parse %s: %v", f, err)
		}
		for _, decl := range file.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				for _, name := range spec.(*ast.ValueSpec).Names {
					if name.Name != "_" {
						out = append(out, fmt.Sprintf("%s: package-level variable %s", fset.Position(name.Pos()), name.Name))
					}
				}
			}
		}
	}
	return out
}

// TestPackageStateRuleCatchesAVariable checks the state rule itself on a
// file that declares one, so it cannot pass by accident.
func TestPackageStateRuleCatchesAVariable(t *testing.T) {
	dir := t.TempDir()
	src := "package x\n\nvar _ error = nil\n\nvar counter int\n"
	if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	got := packageVars(t, dir)
	if len(got) != 1 || !strings.Contains(got[0], "counter") {
		t.Fatalf("packageVars = %v, want one finding naming counter", got)
	}
}

// TestCommentsCiteTheRepository checks that no Go file of the module
// cites the specification files outside the repository: a rule is cited
// as docs/behaviour.md#anchor.
func TestCommentsCiteTheRepository(t *testing.T) {
	// The names are spelled in parts so that this file does not cite them.
	forbidden := []string{"reference-" + "tables", "acp-v1-" + "wire", "seed-" + "acp", "decisions" + ".md",
		"runtimes-" + "more", "shared/" + "spec", "\u00a7"}
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".cache" || d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			for _, f := range forbidden {
				if strings.Contains(line, f) {
					t.Errorf("%s:%d cites %q outside the repository: %s", path, i+1, f, strings.TrimSpace(line))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
