package main_test

import (
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHelpRunGroupsEveryFlag: "acpdrive help run" (and run --help) lists
// every flag of run once, under the headings runtime, session, limits,
// input and output, SSH, with the exit statuses.
func TestHelpRunGroupsEveryFlag(t *testing.T) {
	help, stderr, code := runIn(t, t.TempDir(), "help", "run")
	require.Equal(t, 0, code, stderr)
	viaFlag, _, code := runIn(t, t.TempDir(), "run", "--help")
	require.Equal(t, 0, code)
	assert.Equal(t, help, viaFlag)
	var at []int
	for _, h := range []string{"NAME", "SYNOPSIS", "DESCRIPTION", "RUNTIME", "SESSION", "LIMITS", "INPUT AND OUTPUT", "SSH", "EXIT STATUS", "EXAMPLES"} {
		i := strings.Index(help, "\n"+h+"\n")
		if h == "NAME" {
			i = strings.Index(help, h+"\n")
		}
		require.GreaterOrEqual(t, i, 0, h)
		at = append(at, i)
	}
	assert.IsIncreasing(t, at, "headings in order")
	// Every flag the completion script knows for run appears once.
	bash, _, code := runIn(t, t.TempDir(), "completion", "bash")
	require.Equal(t, 0, code)
	m := regexp.MustCompile(`(?m)^\s+run\) flags="([^"]*)"`).FindStringSubmatch(bash)
	require.NotNil(t, m)
	flags := strings.Fields(m[1])
	assert.Contains(t, flags, "--workspace")
	for _, fl := range flags {
		n := len(regexp.MustCompile(`(?m)^    `+regexp.QuoteMeta(fl)+`( |$)`).FindAllString(help, -1))
		assert.Equal(t, 1, n, "%s listed once in help run", fl)
	}
	assert.Contains(t, help, "    4  a turn was refused or needs a person\n")
	assert.Contains(t, help, "    5  every turn completed, but one that asked for a result")
	assert.Contains(t, help, "    --output-schema-turns each|last\n")
}

// TestCompletionBash: the bash script completes commands, flags and a
// flag's values when bash runs it.
func TestCompletionBash(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	script, _, code := runIn(t, t.TempDir(), "completion", "bash")
	require.Equal(t, 0, code)
	complete := func(words ...string) string {
		src := script + "\nCOMP_WORDS=(" + strings.Join(quoteAll(words), " ") + ")\nCOMP_CWORD=" + strconv.Itoa(len(words)-1) + "\n_acpdrive\necho \"${COMPREPLY[*]}\"\n"
		out, err := exec.Command("bash", "-c", src).CombinedOutput()
		require.NoError(t, err, string(out))
		return strings.TrimSpace(string(out))
	}
	assert.Equal(t, "run", complete("acpdrive", "ru"))
	assert.Equal(t, "--workflow --workspace", complete("acpdrive", "run", "--work"))
	assert.Equal(t, "debug info warn error", complete("acpdrive", "run", "--log-level", ""))
	assert.Equal(t, "each last", complete("acpdrive", "run", "--output-schema-turns", ""))
	assert.Equal(t, "list", complete("acpdrive", "sessions", "l"))
	assert.Equal(t, "--session", complete("acpdrive", "probe", "--sess"))
	assert.Equal(t, "--sessions-per-process", complete("acpdrive", "batch", "--sess"))
	assert.Equal(t, "batch", complete("acpdrive", "help", "ba"))
	assert.Equal(t, "zsh", complete("acpdrive", "completion", "z"))

	for _, shell := range []string{"zsh", "fish"} {
		out, _, code := runIn(t, t.TempDir(), "completion", shell)
		require.Equal(t, 0, code, shell)
		assert.Contains(t, out, "workspace", shell)
		if _, err := exec.LookPath(shell); err == nil {
			check := exec.Command(shell, "-n")
			check.Stdin = strings.NewReader(out)
			msg, err := check.CombinedOutput()
			assert.NoError(t, err, "%s -n: %s", shell, msg)
		}
	}
	_, stderr, code := runIn(t, t.TempDir(), "completion", "tcsh")
	assert.Equal(t, 2, code)
	assert.Equal(t, "acpdrive completion: \"tcsh\": want bash, zsh or fish\n", stderr)
}

func quoteAll(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return out
}

// TestHelpBatchGroupsEveryFlag: "acpdrive help batch" (and batch --help)
// lists every flag of batch once, under its headings, with the exit
// statuses; the completion scripts offer the same flags.
func TestHelpBatchGroupsEveryFlag(t *testing.T) {
	help, stderr, code := runIn(t, t.TempDir(), "help", "batch")
	require.Equal(t, 0, code, stderr)
	viaFlag, _, code := runIn(t, t.TempDir(), "batch", "--help")
	require.Equal(t, 0, code)
	assert.Equal(t, help, viaFlag)
	var at []int
	for _, h := range []string{"NAME", "SYNOPSIS", "DESCRIPTION", "RUNTIME", "SESSION", "LIMITS", "PLACEMENT", "OUTPUT", "SSH", "EXIT STATUS", "EXAMPLES"} {
		i := strings.Index(help, "\n"+h+"\n")
		if h == "NAME" {
			i = strings.Index(help, h+"\n")
		}
		require.GreaterOrEqual(t, i, 0, h)
		at = append(at, i)
	}
	assert.IsIncreasing(t, at, "headings in order")
	bash, _, code := runIn(t, t.TempDir(), "completion", "bash")
	require.Equal(t, 0, code)
	m := regexp.MustCompile(`(?m)^\s+batch\) flags="([^"]*)"`).FindStringSubmatch(bash)
	require.NotNil(t, m)
	flags := strings.Fields(m[1])
	for _, fl := range []string{"--parallel", "--sessions-per-process", "--keep-warm", "--ssh-host", "--json", "--workflow"} {
		assert.Contains(t, flags, fl)
	}
	assert.NotContains(t, flags, "--fork", "a flag of one session run by hand")
	// batch's --resume is its journal's, not run's session id
	// (docs/behaviour.md#batch-journal).
	assert.Contains(t, help, "\n    --resume DIR\n")
	for _, fl := range flags {
		n := len(regexp.MustCompile(`(?m)^    `+regexp.QuoteMeta(fl)+`( |$)`).FindAllString(help, -1))
		assert.Equal(t, 1, n, "%s listed once in help batch", fl)
	}
	assert.Contains(t, help, "    5  every task completed, but one under an output schema ended without\n")
	zsh, _, _ := runIn(t, t.TempDir(), "completion", "zsh")
	assert.Contains(t, zsh, "'--sessions-per-process[sessions one runtime process carries at once]")
	fish, _, _ := runIn(t, t.TempDir(), "completion", "fish")
	assert.Contains(t, fish, "complete -c acpdrive -n '__fish_seen_subcommand_from batch' -l keep-warm -r -d ")
}
