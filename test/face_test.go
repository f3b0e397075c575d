package test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/acpdrive/acpdrive/app"
)

// vendors are the runtimes' vendors and products: their facts belong to
// the adapters, never to domain (issue 28).
var vendors = regexp.MustCompile(`(?i)copilot|claude|anthropic|gemini|codex|openai|qwen|opencode`)

// TestDomainNamesNoVendor: no string in domain's code names a vendor or
// its runtime; comments may.
func TestDomainNamesNoVendor(t *testing.T) {
	for _, f := range goFiles(t, filepath.Join("..", "domain")) {
		ast.Inspect(f.file, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && vendors.MatchString(lit.Value) {
				t.Errorf("%s: domain names a vendor: %s", f.fset.Position(lit.Pos()), lit.Value)
			}
			return true
		})
	}
}

// TestAppAssertsOnlyDeclaredOptionalMethods: every optional method app
// looks for on a port (a launcher's plan's Discard, a source's
// Recognizes) is declared in ports, never an anonymous interface.
func TestAppAssertsOnlyDeclaredOptionalMethods(t *testing.T) {
	for _, f := range goFiles(t, filepath.Join("..", "app")) {
		ast.Inspect(f.file, func(n ast.Node) bool {
			if ta, ok := n.(*ast.TypeAssertExpr); ok {
				if _, anon := ta.Type.(*ast.InterfaceType); anon {
					t.Errorf("%s: an optional method asserted through an anonymous interface; declare it in ports", f.fset.Position(ta.Pos()))
				}
			}
			return true
		})
	}
}

// TestOptionsHoldWhatCallersSet: app.Options has no field for tests only
// or for Probe only (issue 28).
func TestOptionsHoldWhatCallersSet(t *testing.T) {
	typ := reflect.TypeFor[app.Options]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.IsExported() {
			continue
		}
		switch f.Name {
		case "DrainBound", "ProbeSession":
			t.Errorf("app.Options.%s is not for callers", f.Name)
		}
	}
}

type parsedFile struct {
	fset *token.FileSet
	file *ast.File
}

// goFiles parses the non-test Go files of dir.
func goFiles(t *testing.T, dir string) []parsedFile {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var out []parsedFile
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, parsedFile{fset, f})
	}
	return out
}
