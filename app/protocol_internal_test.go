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

	"github.com/acpdrive/acpdrive/protocol/dialect"
)

// TestProtocolPartsAreDistinct: each version acpdrive speaks is one
// dialect, and the session's part over it speaks that version (adding a
// version is registering its dialect).
func TestProtocolPartsAreDistinct(t *testing.T) {
	seen := map[int]bool{}
	for _, d := range dialect.All() {
		v := d.Version()
		require.False(t, seen[v], "version %d has two parts", v)
		seen[v] = true
		require.NotNil(t, d)
		made := newSessionProtocol(&Session{conn: &connection{}}, d)
		assert.Equal(t, v, made.version())
		got, ok := dialect.For(v)
		assert.True(t, ok)
		assert.Equal(t, v, got.Version())
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
