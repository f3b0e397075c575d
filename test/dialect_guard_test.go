package test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// What "names a protocol version" means for TestOnlyADialectNamesItsVersion
// (ARCHITECTURE.md, "Adding a protocol version"):
//
//   - an identifier, declared or used, whose name carries a version:
//     v1, V2, Version2, protocolVersion1, InitializeResponseV2, … (versionName);
//   - a string literal equal to a wire name only one version has: a string
//     constant with no space declared in that version's dialect file and in
//     no other file of protocol/ (state_update, auth/login, plan_update, …).
//
// Comments and the words of messages may name versions; a version number
// as an integer is no name. Only a version's own dialect file
// (protocol/dialect/vN.go) names version N; the registry
// (protocol/dialect/dialect.go) names each version once, in All.
//
// Outside the rule: test files (they drive each version by name), the
// reference agent (refagent/: a second, independent implementation that
// speaks every version), and domain/protocol.go (the operator's grammar of
// agent.protocol: the choices configuration validation accepts without
// knowing the dialects).
var versionName = regexp.MustCompile(`^[vV][0-9]|[^A-Za-z][vV][0-9]|[a-z]V[0-9]|[vV]ersion[0-9]`)

// dialectFile is a version's dialect file and its version.
var dialectFile = regexp.MustCompile(`^protocol/dialect/v([0-9]+)\.go$`)

// exempt lists the files outside the rule, with the reason above.
func exempt(rel string) bool {
	return strings.HasSuffix(rel, "_test.go") || strings.HasPrefix(rel, "refagent/") || rel == "domain/protocol.go"
}

// TestOnlyADialectNamesItsVersion walks every .go file of the module.
func TestOnlyADialectNamesItsVersion(t *testing.T) {
	files := moduleGoFiles(t)
	fset := token.NewFileSet()
	parsed := map[string]*ast.File{}
	for _, rel := range files {
		f, err := parser.ParseFile(fset, filepath.Join("..", rel), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		parsed[rel] = f
	}
	only := versionOnlyWireNames(t, parsed)
	if len(only) == 0 {
		t.Fatal("no dialect declares a wire name of its own: the rule checks nothing")
	}
	for _, rel := range files {
		if exempt(rel) {
			continue
		}
		own := ""
		if m := dialectFile.FindStringSubmatch(rel); m != nil {
			own = m[1]
		}
		f := parsed[rel]
		registry := registryBody(rel, f)
		ast.Inspect(f, func(n ast.Node) bool {
			if n == nil {
				return false
			}
			if registry != nil && n.Pos() >= registry.Pos() && n.End() <= registry.End() {
				return false // the registration lines
			}
			switch x := n.(type) {
			case *ast.Ident:
				if versionName.MatchString(x.Name) && !namesOnly(x.Name, own) {
					t.Errorf("%s: %s names a protocol version outside its dialect file", fset.Position(x.Pos()), x.Name)
				}
			case *ast.BasicLit:
				if x.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(x.Value)
				if err != nil {
					return true
				}
				if v, ok := only[s]; ok && v != own {
					t.Errorf("%s: %q is a wire name only protocol version %s has, outside its dialect file", fset.Position(x.Pos()), s, v)
				}
			}
			return true
		})
	}
}

// namesOnly reports whether every version name carries is own.
func namesOnly(name, own string) bool {
	if own == "" {
		return false
	}
	digits := regexp.MustCompile(`(?i)v(?:ersion)?([0-9]+)`)
	for _, m := range digits.FindAllStringSubmatch(name, -1) {
		if m[1] != own {
			return false
		}
	}
	return true
}

// registryBody is the body of All in the dialect registry, nil elsewhere.
func registryBody(rel string, f *ast.File) *ast.BlockStmt {
	if rel != "protocol/dialect/dialect.go" {
		return nil
	}
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "All" {
			return fn.Body
		}
	}
	return nil
}

// versionOnlyWireNames maps each string constant a dialect file declares
// and no other file of protocol/ declares to its version.
func versionOnlyWireNames(t *testing.T, parsed map[string]*ast.File) map[string]string {
	t.Helper()
	byVersion := map[string]string{}
	elsewhere := map[string]bool{}
	for rel, f := range parsed {
		if !strings.HasPrefix(rel, "protocol/") || strings.HasSuffix(rel, "_test.go") {
			continue
		}
		m := dialectFile.FindStringSubmatch(rel)
		for _, s := range stringConsts(f) {
			if m != nil {
				byVersion[s] = m[1]
			} else {
				elsewhere[s] = true
			}
		}
	}
	for s := range byVersion {
		if elsewhere[s] {
			delete(byVersion, s)
		}
	}
	return byVersion
}

// stringConsts lists the string literals of f's constant declarations.
func stringConsts(f *ast.File) []string {
	var out []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			for _, v := range spec.(*ast.ValueSpec).Values {
				if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, err := strconv.Unquote(lit.Value); err == nil && s != "" && !strings.ContainsAny(s, " \t\n") {
						out = append(out, s)
					}
				}
			}
		}
	}
	return out
}

// moduleGoFiles lists every .go file of the module (its nested modules
// included), relative to the module root, with slashes.
func moduleGoFiles(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".cache" || d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, err := filepath.Rel("..", path)
		if err != nil {
			return err
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestGuardSeesAVersionOutsideItsDialect: the guard's two findings, on
// sources written for the purpose.
func TestGuardSeesAVersionOutsideItsDialect(t *testing.T) {
	for _, name := range []string{"ProtocolVersion2", "InitializeResponseV2", "askV2", "v1Prompter", "UpdateStateUpdateV2"} {
		if !versionName.MatchString(name) {
			t.Errorf("%s is not seen as naming a version", name)
		}
	}
	for _, name := range []string{"utf8", "sha256", "int64", "Event", "envVars", "http2Server", "base64", "IPv4zero", "prev2"} {
		if versionName.MatchString(name) {
			t.Errorf("%s is seen as naming a version", name)
		}
	}
	if !namesOnly("decodeV2", "2") || namesOnly("decodeV1", "2") || namesOnly("ProtocolVersion2", "") {
		t.Error("namesOnly does not tell a dialect's own version from another's")
	}
	f, err := parser.ParseFile(token.NewFileSet(), "v9.go", `package dialect
const a = "nine_only"
const b = "shared"`, 0)
	if err != nil {
		t.Fatal(err)
	}
	g, err := parser.ParseFile(token.NewFileSet(), "wire.go", `package acpwire
const c = "shared"`, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := versionOnlyWireNames(t, map[string]*ast.File{"protocol/dialect/v9.go": f, "protocol/acpwire/wire.go": g})
	if len(got) != 1 || got["nine_only"] != "9" {
		t.Errorf("version-only wire names = %v, want nine_only of 9", got)
	}
}
