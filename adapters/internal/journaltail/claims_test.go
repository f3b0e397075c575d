package journaltail_test

import (
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/adapters/internal/journaltail"
)

func TestNamesPackage(t *testing.T) {
	const pkg, bin = "@acme/tool", "tool"
	cases := []struct {
		word string
		want bool
	}{
		{"tool", true},
		{"/usr/local/bin/tool", true},
		{"/x/node_modules/.bin/tool/", true},
		{`C:\bin\tool.exe`, true},
		{`C:\bin\tool.CMD`, true},
		{"tool.ps1", true},
		{"tool.sh", false},
		{"tool-linux-x64", false},
		{"@acme/tool", true},
		{"@acme/tool@1.2.3", true},
		{"@acme/tool-sdk", false},
		{"/x/node_modules/@acme/tool/dist/index.js", true},
		{"/x/node_modules/@acme/tool", true},
		{"/x/node_modules/@acme/tool-sdk/index.js", false},
		{"@acme", false},
		{"", false},
		{"/", false},
		{`\\`, false},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, journaltail.NamesPackage(c.word, pkg, bin), "%q", c.word)
	}
}

func TestClaims(t *testing.T) {
	cases := []struct {
		command []string
		want    bool
	}{
		{[]string{"npx", "@acme/tool@2", "--acp"}, true},
		{[]string{"node", "/x/node_modules/@acme/tool/cli.js"}, true},
		{[]string{"tool"}, true},
		{[]string{"npx", "other"}, false},
		{nil, false},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, journaltail.Claims(c.command, "@acme/tool", "tool"), "%q", c.command)
	}
}

func TestValidID(t *testing.T) {
	cases := []struct {
		id   string
		want bool
	}{
		{"3c9d2b1a-7e6f-4a5b-9c8d-1e2f3a4b5c6d", true},
		{"", false},
		{".", false},
		{"..", false},
		{"a/b", false},
		{`a\b`, false},
		{"a*", false},
		{"a?", false},
		{"[a]", false},
		{"a\x00", false},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, journaltail.ValidID(c.id), "%q", c.id)
	}
}

func TestPrivateDir(t *testing.T) {
	dir, err := journaltail.PrivateDir("", "acpdrive-journaltail-test-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	fi, err := os.Stat(dir)
	require.NoError(t, err)
	assert.True(t, fi.IsDir())
	assert.Contains(t, fi.Name(), "acpdrive-journaltail-test-")
	if runtime.GOOS != "windows" {
		assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	}
}

func ExampleClaims() {
	fmt.Println(journaltail.Claims([]string{"npx", "@qwen-code/qwen-code@0.1", "--acp"}, "@qwen-code/qwen-code", "qwen"))
	fmt.Println(journaltail.Claims([]string{"gemini", "--acp"}, "@qwen-code/qwen-code", "qwen"))
	// Output:
	// true
	// false
}
