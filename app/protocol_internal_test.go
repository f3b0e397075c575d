package app

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProtocolPartsAreDistinct: each version acpdrive speaks is one part,
// and the part it makes speaks that version (adding a version is adding
// its part to protocolParts).
func TestProtocolPartsAreDistinct(t *testing.T) {
	seen := map[int]bool{}
	for _, p := range protocolParts() {
		require.False(t, seen[p.version], "version %d has two parts", p.version)
		seen[p.version] = true
		require.NotNil(t, p.ask)
		made := p.make(&Session{conn: &connection{}})
		assert.Equal(t, p.version, made.version())
		got, ok := partFor(p.version)
		assert.True(t, ok)
		assert.Equal(t, p.version, got.version)
	}
}

// TestNoVersionOutsideItsPart: no code of app names a protocol version
// outside the per-version files (v1*.go, v2*.go) and the list of parts
// (protocol.go): the rest of the session asks its protocol part
// (docs/behaviour.md#protocol-v2). Comments may name versions.
func TestNoVersionOutsideItsPart(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	perVersion := regexp.MustCompile(`^v[0-9]+(_.*)?\.go$`)
	named := regexp.MustCompile(`(?i)v[0-9]|version[0-9]`)
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || perVersion.MatchString(name) || name == "protocol.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && named.MatchString(id.Name) {
				t.Errorf("%s: %s names a protocol version outside its part", fset.Position(id.Pos()), id.Name)
			}
			return true
		})
	}
}
