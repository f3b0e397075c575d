package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAnswersFile: --answers fills the built-in agent's form in (an
// elicitation line, the turn completes); without it the turn ends
// needing a person with the question on turn_result; an answers file with
// a mistake is a configuration error, exit 2 (docs/behaviour.md#elicitation).
func TestAnswersFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "answers.json")
	require.NoError(t, os.WriteFile(good, []byte(`{"questions":{"Push target":{"branch":"dev"}}}`), 0o600))
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"field":{"branch":"dev"}}`), 0o600))

	type question struct {
		Message string   `json:"message"`
		Action  string   `json:"action"`
		Fields  []string `json:"fields"`
		By      string   `json:"by"`
		Reason  string   `json:"reason"`
	}
	type jsonLine struct {
		Type        string    `json:"type"`
		Outcome     string    `json:"outcome"`
		Elicitation *question `json:"elicitation"`
		Question    *question `json:"question"`
	}
	parse := func(out string) []jsonLine {
		var lines []jsonLine
		dec := json.NewDecoder(strings.NewReader(out))
		for dec.More() {
			var l jsonLine
			require.NoError(t, dec.Decode(&l))
			lines = append(lines, l)
		}
		return lines
	}
	pick := func(lines []jsonLine, typ string) []jsonLine {
		var out []jsonLine
		for _, l := range lines {
			if l.Type == typ {
				out = append(out, l)
			}
		}
		return out
	}

	stdout, stderr, code := runIn(t, dir, "run", "--json", "--answers", good, "#question")
	require.Equal(t, 0, code, stderr)
	lines := parse(stdout)
	asked := pick(lines, "elicitation")
	require.Len(t, asked, 1, stdout)
	assert.Equal(t, question{Message: "Which branch should I push to?", Action: "accept", Fields: []string{"branch"}, By: "answers"}, *asked[0].Elicitation)
	results := pick(lines, "turn_result")
	require.Len(t, results, 1)
	assert.Equal(t, "turn_completed", results[0].Outcome)
	assert.Nil(t, results[0].Question)

	stdout, stderr, code = runIn(t, dir, "run", "--json", "#question")
	assert.Equal(t, 4, code, stderr)
	results = pick(parse(stdout), "turn_result")
	require.Len(t, results, 1)
	assert.Equal(t, "turn_input_required", results[0].Outcome)
	require.NotNil(t, results[0].Question, stdout)
	assert.Equal(t, "Which branch should I push to?", results[0].Question.Message)
	assert.Equal(t, "unanswered", results[0].Question.Action)
	assert.Equal(t, "no_policy", results[0].Question.By)

	_, stderr, code = runIn(t, dir, "run", "--json", "--answers", bad, "#question")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `--answers: `+bad+`: answers: json: unknown field "field"`)

	stdout, stderr, code = runIn(t, dir, "run", "--answers", good, "#question")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, `· question: answered "Which branch should I push to?" (branch)`)
}
