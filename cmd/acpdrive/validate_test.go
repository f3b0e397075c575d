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

// validate runs "acpdrive validate args..." in dir and returns its stdout,
// stderr and exit status.
func validate(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	return runIn(t, dir, append([]string{"validate"}, args...)...)
}

func writeWorkflow(t *testing.T, dir, name string, yamlLines ...string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	doc := "---\n" + strings.Join(yamlLines, "\n") + "\n---\nDo the work.\n"
	require.NoError(t, os.WriteFile(path, []byte(doc), 0o600))
	return path
}

const (
	msgCmdRequired = `error agent.command.required: agent.command is required for agent kind "agent-client-protocol"`
	msgEffort      = `warning agent.effort.not_forwarded: agent-client-protocol.effort has no effect: agent kind "agent-client-protocol" passes no reasoning level to its agent; where the agent takes a reasoning option on its command line, write it in agent.command`
)

func TestValidateHuman(t *testing.T) {
	dir := t.TempDir()
	valid := writeWorkflow(t, dir, "valid.md", "agent:", "  kind: agent-client-protocol", "  command: gemini --acp")
	warnOnly := writeWorkflow(t, dir, "warn.md", "agent:", "  command: gemini --acp",
		"agent-client-protocol:", "  effort: high")
	broken := writeWorkflow(t, dir, "broken.md",
		"agent:",
		"  turn_timeout_ms: \"1h\"",
		"agent-client-protocol:",
		"  mcp_config: [a.json]",
		"  effort: high",
		"worker:",
		"  ssh_hosts: [build-1]",
		"  ssh_strict_host_key_checking: ask")
	badYAML := writeWorkflow(t, dir, "bad.md", "agent:", "  command: a: b")
	tests := []struct {
		name string
		args []string
		out  []string
		code int
	}{
		{"valid prints nothing", []string{valid}, nil, 0},
		{"warnings only exit 0", []string{warnOnly}, []string{msgEffort}, 0},
		{"errors exit 1, every finding in order", []string{broken}, []string{
			"error config.wrong_type: agent.turn_timeout_ms: expected an integer, found a string (line 3)",
			msgCmdRequired,
			"error agent-client-protocol.mcp_config.wrong_type: agent-client-protocol.mcp_config: expected a string (a file path), found a list",
			`warning worker.ssh_strict_host_key_checking.invalid: worker.ssh_strict_host_key_checking "ask" is not one of accept-new, yes, no; using accept-new`,
			msgEffort,
		}, 1},
		{"bad yaml", []string{badYAML}, []string{
			"error workflow.yaml.invalid: the front matter is not valid YAML: line 3: mapping values are not allowed in this context",
		}, 1},
		{"-- ends flags", []string{"--", valid}, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := validate(t, dir, tt.args...)
			assert.Equal(t, tt.code, code, "stderr: %s", stderr)
			assert.Empty(t, stderr)
			var lines []string
			if stdout != "" {
				lines = strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
			}
			assert.Equal(t, tt.out, lines)
		})
	}
}

func TestValidateJSON(t *testing.T) {
	dir := t.TempDir()
	valid := writeWorkflow(t, dir, "valid.md", "agent:", "  command: [gemini, --acp]")
	broken := writeWorkflow(t, dir, "broken.md", "agent:", "  kind: codex", "  command: x <y> & z",
		"agent-client-protocol:", "  effort: low")
	tests := []struct {
		name string
		args []string
		want string
		code int
	}{
		{"clean", []string{"--json", valid}, `{"findings":[],"ok":true}`, 0},
		{"flag after the path", []string{valid, "--json"}, `{"findings":[],"ok":true}`, 0},
		{"single dash flag", []string{"-json", valid}, `{"findings":[],"ok":true}`, 0},
		{"findings", []string{broken, "--json"}, `{"findings":[` +
			`{"severity":"error","check":"agent.kind.unsupported","message":"agent.kind \"codex\" is not supported: acpdrive implements agent kind \"agent-client-protocol\" only"},` +
			`{"severity":"warning","check":"agent.effort.not_forwarded","message":"agent-client-protocol.effort has no effect: agent kind \"agent-client-protocol\" passes no reasoning level to its agent; where the agent takes a reasoning option on its command line, write it in agent.command"}` +
			`],"ok":false}`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := validate(t, dir, tt.args...)
			assert.Equal(t, tt.code, code, "stderr: %s", stderr)
			assert.Empty(t, stderr)
			assert.Equal(t, tt.want+"\n", stdout)
			var v struct {
				Findings []map[string]string `json:"findings"`
				OK       bool                `json:"ok"`
			}
			require.NoError(t, json.Unmarshal([]byte(stdout), &v))
			assert.Equal(t, code == 0, v.OK)
		})
	}
}

func TestValidateDefaultPath(t *testing.T) {
	dir := t.TempDir()
	writeWorkflow(t, dir, "WORKFLOW.md", "agent:", "  max_turns: 3")
	stdout, stderr, code := validate(t, dir)
	assert.Equal(t, 1, code)
	assert.Empty(t, stderr)
	assert.Equal(t, msgCmdRequired+"\n", stdout)

	empty := t.TempDir()
	stdout, stderr, code = validate(t, empty, "--json")
	assert.Equal(t, 2, code)
	assert.Empty(t, stdout)
	assert.Equal(t, "acpdrive validate: read WORKFLOW.md: no such file or directory\n", stderr)
}

func TestValidateUsage(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"unknown flag", []string{"--yaml"}, 2, "acpdrive validate: unknown flag --yaml\n"},
		{"two files", []string{"a.md", "b.md"}, 2, "acpdrive validate: at most one WORKFLOW.md may be named, got 2\n"},
		{"missing file", []string{"nope.md"}, 2, "acpdrive validate: read nope.md: no such file or directory\n"},
		{"a directory", []string{"."}, 2, "acpdrive validate: read .: is a directory\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := validate(t, dir, tt.args...)
			assert.Equal(t, tt.code, code)
			assert.Empty(t, stdout)
			assert.True(t, strings.HasPrefix(stderr, tt.stderr), "stderr: %q", stderr)
		})
	}
	stdout, stderr, code := validate(t, dir, "-h")
	assert.Equal(t, 0, code)
	assert.Empty(t, stderr)
	assert.Contains(t, stdout, "usage: acpdrive validate [WORKFLOW.md] [--json]")
}

func TestValidateHostileFiles(t *testing.T) {
	dir := t.TempDir()
	notUTF8 := filepath.Join(dir, "latin1.md")
	require.NoError(t, os.WriteFile(notUTF8, []byte("---\nagent:\n  command: caf\xe9\n---\n"), 0o600))
	huge := filepath.Join(dir, "huge.md")
	f, err := os.Create(huge)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(16<<20+1)) // sparse
	require.NoError(t, f.Close())
	deep := filepath.Join(dir, "deep.md")
	require.NoError(t, os.WriteFile(deep, []byte("---\nagent: "+strings.Repeat("[", 50000)+"\n---\n"), 0o600))
	tests := []struct {
		path string
		want string
	}{
		{notUTF8, "error workflow.front_matter.not_utf8: the front matter is not valid UTF-8 (line 3, column 15)\n"},
		{huge, "error workflow.too_large: the file is larger than the 16777216-byte limit\n"},
		{deep, "error workflow.yaml.invalid: the front matter is not valid YAML: line 2: exceeded max depth of 10000\n"},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.path), func(t *testing.T) {
			stdout, stderr, code := validate(t, dir, tt.path)
			assert.Equal(t, 1, code)
			assert.Empty(t, stderr)
			assert.Equal(t, tt.want, stdout)
		})
	}
}
