package main_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// permissionScript asks three permissions in one turn: an edit inside the
// workspace, an edit outside it (through ".."), a shell command; each
// outcome is reported in the agent's text.
const permissionScript = `{"defaultTurn":"ask","turns":{"ask":{"steps":[
 {"step":"permission","report":true,"toolCall":{"toolCallId":"e-1","kind":"edit","title":"Edit a.txt","locations":[{"path":"a.txt"}]}},
 {"step":"permission","report":true,"toolCall":{"toolCallId":"e-2","kind":"edit","title":"Edit ../out.txt","locations":[{"path":"../out.txt"}]}},
 {"step":"permission","report":true,"toolCall":{"toolCallId":"x-1","kind":"execute","title":"Run ls","rawInput":{"command":"ls"}}},
 {"step":"stop","stopReason":"end_turn"}]}}}`

// TestRunPermissionsEdit: --permissions edit allows the edit inside the
// workspace and refuses the rest; every decision is an event, and
// run_result counts them (docs/behaviour.md#permission-posture).
func TestRunPermissionsEdit(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	stdout, stderr, code := runIn(t, ws, "run", "--json", "--permissions", "edit", "--command", agentWith(t, permissionScript), "go")
	require.Equal(t, 0, code, stderr)
	type decision struct {
		Permission struct {
			Decision string `json:"decision"`
			By       string `json:"by"`
			OptionID string `json:"option_id"`
			Request  struct {
				Kind    string `json:"kind"`
				Command string `json:"command"`
			} `json:"request"`
		} `json:"permission"`
	}
	var decisions []decision
	var result struct {
		Permissions map[string]int `json:"permissions"`
	}
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		var head struct {
			Type string `json:"type"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &head), sc.Text())
		switch head.Type {
		case "permission_decision":
			var d decision
			require.NoError(t, json.Unmarshal(sc.Bytes(), &d))
			decisions = append(decisions, d)
		case "run_result":
			require.NoError(t, json.Unmarshal(sc.Bytes(), &result))
		}
	}
	require.Len(t, decisions, 3, stdout)
	assert.Equal(t, "allow", decisions[0].Permission.Decision)
	assert.Equal(t, "allow-once", decisions[0].Permission.OptionID)
	assert.Equal(t, "preset edit", decisions[0].Permission.By)
	assert.Equal(t, "refuse", decisions[1].Permission.Decision)
	assert.Equal(t, "reject-once", decisions[1].Permission.OptionID)
	assert.Equal(t, "refuse", decisions[2].Permission.Decision)
	assert.Equal(t, "ls", decisions[2].Permission.Request.Command)
	assert.Equal(t, map[string]int{"allow": 1, "refuse": 2}, result.Permissions)
	assert.Contains(t, stdout, "permission outcome: selected allow-once")
	assert.NotContains(t, stdout, "selected allow-always")
}

// TestRunPermissionsHuman: a line per decision, and the counts.
func TestRunPermissionsHuman(t *testing.T) {
	t.Parallel()
	stdout, stderr, code := runIn(t, t.TempDir(), "run", "--permissions", "edit", "--command", agentWith(t, permissionScript), "go")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, `· permission: allow edit "Edit a.txt" (preset edit)`)
	assert.Contains(t, stdout, `· permission: refuse execute "Run ls" (preset edit)`)
	assert.Contains(t, stdout, "permissions: allow 1, refuse 2")
}

// TestRunPermissionsDefault: nothing chosen is the refusal posture, each
// refusal an event.
func TestRunPermissionsDefault(t *testing.T) {
	t.Parallel()
	stdout, stderr, code := runIn(t, t.TempDir(), "run", "--json", "--command", agentWith(t, permissionScript), "go")
	require.Equal(t, 0, code, stderr)
	assert.NotContains(t, stdout, "selected allow")
	assert.Contains(t, stdout, `"permissions":{"refuse":3}`)
}

// TestRunPermissionRulesPerson: a rules file sending execute to a person
// ends the turn turn_input_required; a rules file with a fault is
// refused before anything starts, with its line.
func TestRunPermissionRulesPerson(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.txt")
	require.NoError(t, os.WriteFile(rules, []byte("allow kind=edit path=inside\nperson kind=execute\nrefuse\n"), 0o644))
	lines, stderr, code := run(t, "run", "--json", "--permissions", "rules:"+rules, "--command", agentWith(t, permissionScript), "go")
	require.NotEqual(t, 0, code, stderr)
	results := ofType(lines, "turn_result")
	require.Len(t, results, 1)
	assert.Equal(t, "turn_input_required", results[0].Outcome)

	bad := filepath.Join(dir, "bad.txt")
	require.NoError(t, os.WriteFile(bad, []byte("allow kind=edit\n"), 0o644))
	_, stderr, code = run(t, "run", "--json", "--permissions", "rules:"+bad, "go")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, stderr, bad+":1: the last rule is the default")
	_, stderr, code = run(t, "run", "--permissions", "everything", "go")
	assert.NotEqual(t, 0, code)
	assert.Contains(t, stderr, "--permissions")
}
