package main_test

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
)

// readmeExample is one "$ command" of a console block of README.md and
// the output printed under it.
type readmeExample struct {
	line    int // of the command in README.md
	command string
	output  []string
}

// readmeExamples reads every console block of README.md.
func readmeExamples(t *testing.T) []readmeExample {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	var out []readmeExample
	inBlock := false
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case l == "```console":
			inBlock = true
		case inBlock && strings.HasPrefix(l, "```"):
			inBlock = false
		case inBlock && strings.HasPrefix(l, "$ "):
			ex := readmeExample{line: i + 1, command: strings.TrimPrefix(l, "$ ")}
			for strings.HasSuffix(ex.command, `\`) && i+1 < len(lines) {
				i++
				ex.command = strings.TrimSuffix(ex.command, `\`) + strings.TrimSpace(lines[i])
			}
			out = append(out, ex)
		case inBlock && len(out) > 0:
			out[len(out)-1].output = append(out[len(out)-1].output, l)
		}
	}
	return out
}

var pidRE = regexp.MustCompile(`pid \d+`)

// TestREADMEExamples runs every README console example that the
// built-in reference agent can run (no --command naming another runtime,
// no environment, no pipe) and checks its output byte for byte, the
// process id aside; a last line "…" stands for output left out.
func TestREADMEExamples(t *testing.T) {
	bin := testbin.Path(t)
	ran := 0
	for _, ex := range readmeExamples(t) {
		words, err := domain.SplitHostCommandLine(ex.command)
		require.NoError(t, err, "README.md:%d", ex.line)
		switch {
		case len(words) >= 3 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/acpdrive":
			words = words[3:]
		case words[0] == "acpdrive":
			words = words[1:]
		default:
			t.Logf("README.md:%d: not run (needs %s): %s", ex.line, words[0], ex.command)
			continue
		}
		if i := indexOf(words, "--command"); i >= 0 || indexOf(words, "|") >= 0 {
			t.Logf("README.md:%d: not run (another runtime or a pipe): %s", ex.line, ex.command)
			continue
		}
		t.Run(ex.command, func(t *testing.T) {
			cmd := exec.Command(bin, words...)
			cmd.Dir = t.TempDir()
			cmd.Env = withoutOTel(os.Environ())
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			_ = cmd.Run()
			got := strings.Split(pidRE.ReplaceAllString(out.String(), "pid N"), "\n")
			want := ex.output
			if n := len(want); n > 0 && want[n-1] == "…" {
				want = want[:n-1]
				require.GreaterOrEqual(t, len(got), len(want), "README.md:%d\n%s", ex.line, out.String())
				got = got[:len(want)]
			} else {
				want = append(append([]string(nil), want...), "") // the last line break
			}
			for i := range want {
				want[i] = pidRE.ReplaceAllString(want[i], "pid N")
			}
			assert.Equal(t, strings.Join(want, "\n"), strings.Join(got, "\n"), "README.md:%d", ex.line)
		})
		ran++
	}
	assert.GreaterOrEqual(t, ran, 3, "README's runnable examples")
}

func indexOf(words []string, w string) int {
	for i, x := range words {
		if x == w {
			return i
		}
	}
	return -1
}

func withoutOTel(env []string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, "OTEL_") {
			out = append(out, e)
		}
	}
	return out
}
