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
		require.NotNil(t, p.dialect)
		assert.Equal(t, p.version, p.dialect.Version())
		made := p.make(&Session{conn: &connection{}})
		assert.Equal(t, p.version, made.version())
		got, ok := partFor(p.version)
		assert.True(t, ok)
		assert.Equal(t, p.version, got.version)
	}
}

// TestNoVersionOutsideItsPart: no code of app names a protocol version:
// every version is a dialect of protocol/dialect, and the session asks
// its dialect for what differs (docs/behaviour.md#protocol-v2). Comments
// may name versions. The module-wide rule is test/dialect_guard_test.go.
func TestNoVersionOutsideItsPart(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	named := regexp.MustCompile(`(?i)v[0-9]|version[0-9]`)
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && named.MatchString(id.Name) {
				t.Errorf("%s: %s names a protocol version outside its dialect", fset.Position(id.Pos()), id.Name)
			}
			return true
		})
	}
}
