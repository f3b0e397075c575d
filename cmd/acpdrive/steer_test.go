package main_test

import (
	"bufio"
	"encoding/json"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
)

// run --steer-stdin: a line read while the turn runs goes into it as a
// steer; the stream shows steered and the turn completes
// (docs/behaviour.md#steering).
func TestRunSteerStdin(t *testing.T) {
	bin := testbin.Path(t)
	cmd := exec.Command(bin, "run", "--json", "--steer-stdin", "--command", bin+" agent --scenario steering", "work on it")
	cmd.Dir = t.TempDir()
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(stdout)
	var lines []line
	var raw []string
	sent := false
	for sc.Scan() {
		var l line
		require.NoError(t, json.Unmarshal(sc.Bytes(), &l))
		lines = append(lines, l)
		raw = append(raw, sc.Text())
		// The agent's first chunk says the turn waits for a steer.
		if !sent && l.Type == "message_chunk" {
			_, err := stdin.Write([]byte("stop and commit what you have\n"))
			require.NoError(t, err)
			sent = true
		}
	}
	require.NoError(t, stdin.Close())
	require.NoError(t, cmd.Wait(), stderr.String())
	steered := ofType(lines, "steered")
	require.Len(t, steered, 1, strings.Join(raw, "\n"))
	assert.Contains(t, strings.Join(raw, "\n"), `"message":"stop and commit what you have"`)
	results := ofType(lines, "turn_result")
	require.Len(t, results, 1)
	assert.Equal(t, "turn_completed", results[0].Outcome)
	assert.NotContains(t, stderr.String(), "steer not sent")
}

func TestRunSteerStdinExcludesPromptFromStdin(t *testing.T) {
	_, stderr, code := runIn(t, t.TempDir(), "run", "--steer-stdin", "-f", "-")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "--steer-stdin and -f - both read standard input")
}

// probe shows whether the runtime advertises steering, in both outputs.
func TestProbeSteering(t *testing.T) {
	bin := testbin.Path(t)
	for _, tc := range []struct {
		scenario, human string
		json            bool
	}{{"steering", "advertised (_session/steering)", true}, {"echo", "not advertised", false}} {
		cmd := exec.Command(bin, "probe", "--json", "--command", bin+" agent --scenario "+tc.scenario)
		cmd.Dir = t.TempDir()
		out, err := cmd.Output()
		require.NoError(t, err)
		var report struct {
			Steering bool `json:"steering"`
			Agent    struct {
				Advertised struct {
					Steering bool `json:"steering"`
				} `json:"advertised"`
			} `json:"agent"`
		}
		require.NoError(t, json.Unmarshal(out, &report), string(out))
		assert.Equal(t, tc.json, report.Steering, tc.scenario)

		cmd = exec.Command(bin, "probe", "--command", bin+" agent --scenario "+tc.scenario)
		cmd.Dir = t.TempDir()
		out, err = cmd.Output()
		require.NoError(t, err)
		assert.Regexp(t, `steering\s+`+regexp.QuoteMeta(tc.human), string(out), tc.scenario)
	}
}
