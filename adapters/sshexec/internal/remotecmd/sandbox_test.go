package remotecmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
)

// TestQuoteSandboxWord: acpdrive's own expansions expand remotely, a home
// entry expands the home only, everything else is literal.
func TestQuoteSandboxWord(t *testing.T) {
	cases := map[string]string{
		"${HOME}/.codex":                `"${HOME}/.codex"`,
		"${CODEX_HOME:-${HOME}/.codex}": `"${CODEX_HOME:-${HOME}/.codex}"`,
		"${acpdrive_tmp}":               `"${acpdrive_tmp}"`,
		"${HOME}/my dir":                `"${HOME}"/'my dir'`,
		"${HOME}/$(touch x)":            `"${HOME}"/'$(touch x)'`,
		"${x:-$(id)}":                   `'${x:-$(id)}'`,
		"/ws/it's":                      `'/ws/it'\''s'`,
		"--bind-try":                    `'--bind-try'`,
	}
	for in, want := range cases {
		assert.Equal(t, want, quoteSandboxWord(in), in)
	}
}

// TestSandboxWordsRun: the words a remote shell runs give the documented
// bubblewrap command line, with the remote home expanded.
func TestSandboxWordsRun(t *testing.T) {
	words := SandboxWords(RemoteSandbox{Network: domain.SandboxNetNone, Writable: []string{"~/extra", "/abs"}, AddDirs: []string{"/add"}},
		"/ws", "agent 'x'")
	require.True(t, strings.HasPrefix(words, "trap '' TERM; exec bwrap "), words)
	script := "printf '%s\\n' " + strings.TrimPrefix(words, "trap '' TERM; exec bwrap ")
	home := t.TempDir()
	cmd := exec.Command("sh", "-c", "set -- --ro-bind-try /tmp/k /tmp/k; "+script)
	cmd.Env = []string{"HOME=" + home, "CODEX_HOME=/c", "PATH=" + os.Getenv("PATH")}
	out, err := cmd.Output()
	require.NoError(t, err)
	got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	assert.Contains(t, got, filepath.Join(home, ".claude"))
	assert.Contains(t, got, "/c")
	assert.Contains(t, got, filepath.Join(home, "extra"))
	assert.Contains(t, got, "/abs")
	assert.Contains(t, got, "--unshare-net")
	assert.Equal(t, []string{"--", "/bin/sh", "-c", domain.SandboxInnerShim, "sh", "/bin/sh", "-c", "agent 'x'"}, got[len(got)-8:])
	i := indexOf(got, "TMPDIR")
	require.Positive(t, i)
	assert.Equal(t, "/tmp", got[i+1])
	assert.Equal(t, []string{"--tmpfs", "/tmp", "--ro-bind-try", "/tmp/k", "/tmp/k"}, got[7:12])
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}
