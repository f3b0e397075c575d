package config_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/config"
	"github.com/acpdrive/acpdrive/domain"
)

const wf = "/repo/flows/WORKFLOW.md"

func errorF(check, msg string) domain.Finding {
	return domain.Finding{Severity: domain.SeverityError, Check: check, Message: msg}
}

func warnF(check, msg string) domain.Finding {
	return domain.Finding{Severity: domain.SeverityWarning, Check: check, Message: msg}
}

var (
	cmdRequired = errorF("agent.command.required", `agent.command is required for agent kind "agent-client-protocol"`)
	effortWarn  = warnF("agent.effort.not_forwarded", `agent-client-protocol.effort has no effect: agent kind "agent-client-protocol" passes no reasoning level to its agent; where the agent takes a reasoning option on its command line, write it in agent.command`)
	usageWarn   = warnF("agent.kind.no_usage_reporting", `agent.max_tokens is set but agent kind "agent-client-protocol" has no journal source for the sessions this configuration produces (SSH): only a runtime that reports usage in its prompt results can be measured, and for any other the per-issue token ceiling can never be reached`)
	costWarn    = warnF("agent.kind.no_cost_estimate", `token_rates prices agent kind "agent-client-protocol", which reports no token usage for the sessions this configuration produces: no cost can be estimated for it`)
)

func mcpType(found string) domain.Finding {
	return errorF("agent-client-protocol.mcp_config.wrong_type",
		"agent-client-protocol.mcp_config: expected a string (a file path), found "+found)
}

// front wraps YAML lines in a WORKFLOW.md with a body; the first YAML line
// is line 2 of the file.
func front(lines ...string) string {
	return "---\n" + strings.Join(lines, "\n") + "\n---\nYou are working on {{ .issue.identifier }}.\n"
}

func TestParseFullFile(t *testing.T) {
	doc := front(
		"tracker:",
		"  kind: jira",
		"  active_states: [To Do]",
		"agent:",
		"  kind: agent-client-protocol",
		`  command: gemini --acp -m "gemini 2.5 pro"`,
		"  max_turns: 15",
		"  max_sessions: 3",
		"  max_tokens: 1500000",
		"  max_concurrent_agents: 4",
		"  max_concurrent_agents_by_state: {in progress: 3}",
		"  turn_timeout_ms: 1800000",
		"  read_timeout_ms: 10000",
		"  stall_timeout_ms: 0",
		"  stop_grace_ms: 2500",
		"  max_retry_backoff_ms: 120000",
		"  max_retries: 3",
		"agent-client-protocol:",
		"  mcp_config: ./mcp-servers.json",
		"worker:",
		"  ssh_hosts: []",
		"  ssh_strict_host_key_checking: \"yes\"",
		"  ssh_pass_env: [GEMINI_API_KEY]",
		"  max_concurrent_agents_per_host: 2",
		"token_rates:",
		"  claude-code: {input_per_mtok: 3}",
		"server: {port: 0}",
	)
	cfg, findings := config.Parse([]byte(doc), wf)
	assert.Empty(t, findings)
	want := domain.Config{
		Kind:                     "agent-client-protocol",
		Command:                  []string{"gemini", "--acp", "-m", "gemini 2.5 pro"},
		MaxTurns:                 15,
		TurnTimeout:              30 * time.Minute,
		ReadTimeout:              10 * time.Second,
		StallTimeout:             0,
		StopGrace:                2500 * time.Millisecond,
		MaxRetryBackoff:          2 * time.Minute,
		MaxRetries:               3,
		MaxConcurrentAgents:      4,
		MaxTokens:                1500000,
		MCPConfig:                "/repo/flows/mcp-servers.json",
		SSHHosts:                 []string{},
		SSHStrictHostKeyChecking: "yes",
		SSHPassEnv:               []string{"GEMINI_API_KEY"},
	}
	assert.Equal(t, want, cfg)
}

func TestParseDefaults(t *testing.T) {
	tests := []struct {
		name string
		doc  string
	}{
		{"no front matter", "Just a prompt.\n"},
		{"empty file", ""},
		{"empty front matter", "---\n---\nbody"},
		{"comment-only front matter", "---\n# nothing yet\n---\n"},
		{"null front matter", "---\n~\n---\n"},
		{"blocks null", front("agent:", "agent-client-protocol:", "worker:", "token_rates:")},
		{"dashes later are body", "Intro\n---\nagent: {command: x}\n---\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, findings := config.Parse([]byte(tt.doc), wf)
			assert.Equal(t, domain.DefaultConfig(), cfg)
			assert.Equal(t, []domain.Finding{cmdRequired}, findings)
		})
	}
}

func TestParseCommand(t *testing.T) {
	tests := []struct {
		name     string
		yaml     []string
		want     []string
		findings []domain.Finding
	}{
		{"string", []string{"agent:", "  command: kiro-cli acp -a"}, []string{"kiro-cli", "acp", "-a"}, nil},
		{"quoted words", []string{"agent:", `  command: "run 'a b' \"c d\""`}, []string{"run", "a b", "c d"}, nil},
		{"list", []string{"agent:", "  command: [gemini, --acp, '--model=x y']"}, []string{"gemini", "--acp", "--model=x y"}, nil},
		{"block list", []string{"agent:", "  command:", "    - /opt/bin/agent", "    - acp"}, []string{"/opt/bin/agent", "acp"}, nil},
		{"empty string", []string{"agent:", `  command: ""`}, nil, []domain.Finding{cmdRequired}},
		{"blank string", []string{"agent:", `  command: "   "`}, nil, []domain.Finding{cmdRequired}},
		{"empty list", []string{"agent:", "  command: []"}, []string{}, []domain.Finding{cmdRequired}},
		{"null", []string{"agent:", "  command:"}, nil, []domain.Finding{cmdRequired}},
		{"unterminated quote", []string{"agent:", "  command: gemini 'oops"}, nil, []domain.Finding{
			errorF("agent.command.invalid", "agent.command: unterminated quote (single quote at byte 7) (line 3)")}},
		{"trailing backslash", []string{"agent:", `  command: 'gemini \'`}, nil, []domain.Finding{
			errorF("agent.command.invalid", "agent.command: trailing backslash at byte 7 (line 3)")}},
		{"number", []string{"agent:", "  command: 42"}, nil, []domain.Finding{
			errorF("config.wrong_type", "agent.command: expected a string or a list of strings, found an integer (line 3)")}},
		{"mapping", []string{"agent:", "  command: {bin: gemini}"}, nil, []domain.Finding{
			errorF("config.wrong_type", "agent.command: expected a string or a list of strings, found a mapping (line 3)")}},
		{"list with a number", []string{"agent:", "  command: [gemini, --port, 8080]"}, nil, []domain.Finding{
			errorF("config.wrong_type", "agent.command[2]: expected a string, found an integer (line 3)")}},
		{"list with a list", []string{"agent:", "  command:", "    - gemini", "    - [a]"}, nil, []domain.Finding{
			errorF("config.wrong_type", "agent.command[1]: expected a string, found a list (line 5)")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, findings := config.Parse([]byte(front(tt.yaml...)), wf)
			assert.Equal(t, tt.want, cfg.Command)
			assert.Equal(t, tt.findings, findings)
		})
	}
}

// TestParseChecks covers every check a front matter can draw, with its
// exact severity, name and message.
func TestParseChecks(t *testing.T) {
	const cmd = "  command: gemini --acp"
	tests := []struct {
		name string
		yaml []string
		want []domain.Finding
	}{
		{"valid minimal", []string{"agent:", cmd}, nil},

		// docs/behaviour.md#validation
		{"kind unsupported", []string{"agent:", "  kind: claude-code", cmd}, []domain.Finding{
			errorF("agent.kind.unsupported", `agent.kind "claude-code" is not supported: acpdrive implements agent kind "agent-client-protocol" only`)}},
		{"command missing", []string{"agent:", "  kind: agent-client-protocol"}, []domain.Finding{cmdRequired}},
		{"stop grace zero", []string{"agent:", cmd, "  stop_grace_ms: 0"}, []domain.Finding{
			errorF("agent.stop_grace_ms.non_positive", "agent.stop_grace_ms must be positive")}},
		{"mcp_config integer", []string{"agent:", cmd, "agent-client-protocol:", "  mcp_config: 42"}, []domain.Finding{mcpType("an integer")}},
		{"mcp_config list", []string{"agent:", cmd, "agent-client-protocol:", "  mcp_config: [a.json]"}, []domain.Finding{mcpType("a list")}},
		{"mcp_config mapping", []string{"agent:", cmd, "agent-client-protocol:", "  mcp_config: {path: a.json}"}, []domain.Finding{mcpType("a mapping")}},
		{"mcp_config boolean", []string{"agent:", cmd, "agent-client-protocol:", "  mcp_config: true"}, []domain.Finding{mcpType("a boolean")}},
		{"mcp_config float", []string{"agent:", cmd, "agent-client-protocol:", "  mcp_config: 1.5"}, []domain.Finding{mcpType("a float")}},
		{"mcp_config timestamp", []string{"agent:", cmd, "agent-client-protocol:", "  mcp_config: 2026-01-02"}, []domain.Finding{mcpType("a timestamp")}},
		{"mcp_config custom tag", []string{"agent:", cmd, "agent-client-protocol:", "  mcp_config: !path a.json"}, []domain.Finding{mcpType(`a value tagged "!path"`)}},
		{"mcp_config through alias", []string{"x: &n 7", "agent:", cmd, "agent-client-protocol:", "  mcp_config: *n"}, []domain.Finding{mcpType("an integer")}},
		{"mcp_config null is absent", []string{"agent:", cmd, "agent-client-protocol:", "  mcp_config:"}, nil},
		{"mcp_config quoted number is a string", []string{"agent:", cmd, "agent-client-protocol:", `  mcp_config: "42"`}, nil},
		{"effort", []string{"agent:", cmd, "agent-client-protocol:", "  effort: high"}, []domain.Finding{effortWarn}},
		{"effort false", []string{"agent:", cmd, "agent-client-protocol:", "  effort: false"}, []domain.Finding{effortWarn}},
		{"effort zero", []string{"agent:", cmd, "agent-client-protocol:", "  effort: 0"}, []domain.Finding{effortWarn}},
		{"effort list", []string{"agent:", cmd, "agent-client-protocol:", "  effort: [high]"}, []domain.Finding{effortWarn}},
		{"effort mapping", []string{"agent:", cmd, "agent-client-protocol:", "  effort: {level: high}"}, []domain.Finding{effortWarn}},
		{"effort empty string", []string{"agent:", cmd, "agent-client-protocol:", `  effort: ""`}, nil},
		{"effort null", []string{"agent:", cmd, "agent-client-protocol:", "  effort: ~"}, nil},
		{"effort empty list", []string{"agent:", cmd, "agent-client-protocol:", "  effort: []"}, nil},
		{"max_tokens remote", []string{"agent:", cmd, "  max_tokens: 100", "worker:", "  ssh_hosts: [build-1]"}, []domain.Finding{usageWarn}},
		{"max_tokens local", []string{"agent:", cmd, "  max_tokens: 100"}, nil},
		{"max_tokens zero remote", []string{"agent:", cmd, "  max_tokens: 0", "worker:", "  ssh_hosts: [build-1]"}, nil},
		{"token_rates remote", []string{"agent:", cmd, "worker:", "  ssh_hosts: [build-1]",
			"token_rates:", "  agent-client-protocol: {input_per_mtok: 1.0}"}, []domain.Finding{costWarn}},
		{"token_rates local", []string{"agent:", cmd, "token_rates:", "  agent-client-protocol: {input_per_mtok: 1.0}"}, nil},
		{"token_rates other kind remote", []string{"agent:", cmd, "worker:", "  ssh_hosts: [build-1]",
			"token_rates:", "  claude-code: {input_per_mtok: 3}"}, nil},
		{"token_rates null entry remote", []string{"agent:", cmd, "worker:", "  ssh_hosts: [build-1]",
			"token_rates:", "  agent-client-protocol:"}, nil},
		{"token_rates not a mapping", []string{"agent:", cmd, "worker:", "  ssh_hosts: [build-1]", "token_rates: 5"}, nil},
		{"both usage warnings", []string{"agent:", cmd, "  max_tokens: 1", "worker:", "  ssh_hosts: [a, b]",
			"token_rates:", "  agent-client-protocol: {output_per_mtok: 2}"}, []domain.Finding{usageWarn, costWarn}},
		{"host key invalid", []string{"agent:", cmd, "worker:", "  ssh_strict_host_key_checking: ask"}, []domain.Finding{
			warnF("worker.ssh_strict_host_key_checking.invalid", `worker.ssh_strict_host_key_checking "ask" is not one of accept-new, yes, no; using accept-new`)}},

		// wrong types
		{"agent not a mapping", []string{"agent: gemini"}, []domain.Finding{
			errorF("config.wrong_type", "agent: expected a mapping, found a string (line 2)")}},
		{"acp block a list", []string{"agent:", cmd, "agent-client-protocol: [mcp_config]"}, []domain.Finding{
			errorF("config.wrong_type", "agent-client-protocol: expected a mapping, found a list (line 4)")}},
		{"worker a string", []string{"agent:", cmd, "worker: build-1"}, []domain.Finding{
			errorF("config.wrong_type", "worker: expected a mapping, found a string (line 4)")}},
		{"kind number", []string{"agent:", "  kind: 7", cmd}, []domain.Finding{
			errorF("config.wrong_type", "agent.kind: expected a string, found an integer (line 3)")}},
		{"turn timeout string", []string{"agent:", cmd, `  turn_timeout_ms: "1800000"`}, []domain.Finding{
			errorF("config.wrong_type", "agent.turn_timeout_ms: expected an integer, found a string (line 4)")}},
		{"read timeout float", []string{"agent:", cmd, "  read_timeout_ms: 1.5"}, []domain.Finding{
			errorF("config.wrong_type", "agent.read_timeout_ms: expected an integer, found a float (line 4)")}},
		{"stall timeout bool", []string{"agent:", cmd, "  stall_timeout_ms: false"}, []domain.Finding{
			errorF("config.wrong_type", "agent.stall_timeout_ms: expected an integer, found a boolean (line 4)")}},
		{"stop grace null", []string{"agent:", cmd, "  stop_grace_ms: null"}, []domain.Finding{
			errorF("config.wrong_type", "agent.stop_grace_ms: expected an integer, found null (line 4)")}},
		{"max turns list", []string{"agent:", cmd, "  max_turns: [1]"}, []domain.Finding{
			errorF("config.wrong_type", "agent.max_turns: expected an integer, found a list (line 4)")}},
		{"max sessions string", []string{"agent:", cmd, "  max_sessions: many"}, []domain.Finding{
			errorF("config.wrong_type", "agent.max_sessions: expected an integer, found a string (line 4)")}},
		{"max tokens float", []string{"agent:", cmd, "  max_tokens: 1e6"}, []domain.Finding{
			errorF("config.wrong_type", "agent.max_tokens: expected an integer, found a float (line 4)")}},
		{"max concurrent agents string", []string{"agent:", cmd, "  max_concurrent_agents: ten"}, []domain.Finding{
			errorF("config.wrong_type", "agent.max_concurrent_agents: expected an integer, found a string (line 4)")}},
		{"by state list", []string{"agent:", cmd, "  max_concurrent_agents_by_state: [3]"}, []domain.Finding{
			errorF("config.wrong_type", "agent.max_concurrent_agents_by_state: expected a mapping, found a list (line 4)")}},
		{"backoff mapping", []string{"agent:", cmd, "  max_retry_backoff_ms: {a: 1}"}, []domain.Finding{
			errorF("config.wrong_type", "agent.max_retry_backoff_ms: expected an integer, found a mapping (line 4)")}},
		{"ssh hosts string", []string{"agent:", cmd, "worker:", "  ssh_hosts: build-1"}, []domain.Finding{
			errorF("config.wrong_type", "worker.ssh_hosts: expected a list of strings, found a string (line 5)")}},
		{"ssh hosts element", []string{"agent:", cmd, "worker:", "  ssh_hosts: [a, 3]"}, []domain.Finding{
			errorF("config.wrong_type", "worker.ssh_hosts[1]: expected a string, found an integer (line 5)")}},
		{"host key boolean", []string{"agent:", cmd, "worker:", "  ssh_strict_host_key_checking: true"}, []domain.Finding{
			errorF("config.wrong_type", "worker.ssh_strict_host_key_checking: expected a string, found a boolean (line 5)")}},
		{"pass env mapping", []string{"agent:", cmd, "worker:", "  ssh_pass_env: {A: 1}"}, []domain.Finding{
			errorF("config.wrong_type", "worker.ssh_pass_env: expected a list of strings, found a mapping (line 5)")}},
		{"per host string", []string{"agent:", cmd, "worker:", "  max_concurrent_agents_per_host: two"}, []domain.Finding{
			errorF("config.wrong_type", "worker.max_concurrent_agents_per_host: expected an integer, found a string (line 5)")}},
		{"root a list", []string{"- agent"}, []domain.Finding{
			errorF("config.wrong_type", "front matter: expected a mapping, found a list (line 2)")}},
		{"root a string", []string{"hello"}, []domain.Finding{
			errorF("config.wrong_type", "front matter: expected a mapping, found a string (line 2)")}},
		{"complex key", []string{"agent:", cmd, "  ? [a]", "  : 1"}, []domain.Finding{
			errorF("config.wrong_type", "agent: a key must be a string, found a list (line 4)")}},
		{"complex top-level key", []string{"? {a: 1}", ": 1", "agent:", cmd}, []domain.Finding{
			errorF("config.wrong_type", "front matter: a key must be a string, found a mapping (line 2)")}},

		// ranges
		{"integer too large", []string{"agent:", cmd, "  max_turns: 99999999999999999999"}, []domain.Finding{
			errorF("config.out_of_range", "agent.max_turns: 99999999999999999999 is out of range (line 4)")}},
		{"millis too large", []string{"agent:", cmd, "  turn_timeout_ms: 9223372036855"}, []domain.Finding{
			errorF("config.out_of_range", "agent.turn_timeout_ms: 9223372036855 is out of range (at most 9223372036854 milliseconds) (line 4)")}},
		{"millis too small", []string{"agent:", cmd, "  stall_timeout_ms: -9223372036855"}, []domain.Finding{
			errorF("config.out_of_range", "agent.stall_timeout_ms: -9223372036855 is out of range (at most 9223372036854 milliseconds) (line 4)")}},
		{"millis at the bound", []string{"agent:", cmd, "  turn_timeout_ms: 9223372036854"}, nil},

		// duplicates and unknown keys
		{"duplicate key", []string{"agent:", cmd, "  max_turns: 1", "  max_turns: 2"}, []domain.Finding{
			errorF("config.duplicate_key", "agent.max_turns: the key appears twice, at lines 4 and 5")}},
		{"duplicate command keeps the verdict precise", []string{"agent:", cmd, cmd}, []domain.Finding{
			errorF("config.duplicate_key", "agent.command: the key appears twice, at lines 3 and 4")}},
		{"duplicate block", []string{"agent:", cmd, "agent:", cmd}, []domain.Finding{
			errorF("config.duplicate_key", "agent: the key appears twice, at lines 2 and 4")}},
		{"unknown agent key", []string{"agent:", cmd, "  turn_timout_ms: 5"}, []domain.Finding{
			warnF("config.unknown_key", "agent.turn_timout_ms: the agent block has no such key; it is ignored (line 4)")}},
		{"unknown acp key", []string{"agent:", cmd, "agent-client-protocol:", "  model: gemini-2.5-pro"}, []domain.Finding{
			warnF("config.unknown_key", `agent-client-protocol.model: agent kind "agent-client-protocol" reads no such key (it reads mcp_config and confirm_tool_servers[_timeout_ms] only; runtime settings belong in agent.command); it is ignored (line 5)`)}},
		{"unknown worker key", []string{"agent:", cmd, "worker:", "  hosts: [a]"}, []domain.Finding{
			warnF("config.unknown_key", "worker.hosts: the worker block has no such key; it is ignored (line 5)")}},
		{"unknown top-level keys are the orchestrator's", []string{"agent:", cmd, "polling: {interval_ms: 1}", "whatever: [1]"}, nil},
		{"effort in the agent block is unknown", []string{"agent:", cmd, "  effort: high"}, []domain.Finding{
			warnF("config.unknown_key", "agent.effort: the agent block has no such key; it is ignored (line 4)")}},

		// several at once, in order: the loader's by line, then Validate's
		{"fixed order", []string{
			"agent:",
			"  kind: codex",
			"  command: 5",
			"  bogus: 1",
			"  stop_grace_ms: -1",
			"agent-client-protocol:",
			"  mcp_config: [x]",
			"  effort: high",
		}, []domain.Finding{
			errorF("config.wrong_type", "agent.command: expected a string or a list of strings, found an integer (line 4)"),
			warnF("config.unknown_key", "agent.bogus: the agent block has no such key; it is ignored (line 5)"),
			errorF("agent.kind.unsupported", `agent.kind "codex" is not supported: acpdrive implements agent kind "agent-client-protocol" only`),
			errorF("agent.stop_grace_ms.non_positive", "agent.stop_grace_ms must be positive"),
			mcpType("a list"),
			effortWarn,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, findings := config.Parse([]byte(front(tt.yaml...)), wf)
			assert.Equal(t, tt.want, findings)
		})
	}
}

// TestSameVerdict checks that Validate on the loaded Config (what a session
// build and a reload run) reports each finding of docs/behaviour.md#validation with the same text.
func TestSameVerdict(t *testing.T) {
	doc := front("agent:", "  kind: codex", "  max_tokens: 5",
		"agent-client-protocol:", "  mcp_config: {a: 1}", "  effort: high",
		"worker:", "  ssh_hosts: [h]", "  ssh_strict_host_key_checking: maybe",
		"token_rates:", "  agent-client-protocol: {input_per_mtok: 1}")
	path := filepath.Join(t.TempDir(), "WORKFLOW.md")
	require.NoError(t, os.WriteFile(path, []byte(doc), 0o600))
	cfg, findings, err := config.Load(path)
	require.NoError(t, err)
	again := cfg.Validate()
	assert.Equal(t, findings, again, "Load's findings and Validate's on its Config differ")
	cfg2, findings2, err := config.Load(path)
	require.NoError(t, err)
	assert.Equal(t, cfg, cfg2)
	assert.Equal(t, findings, findings2)
	var checks []string
	for _, f := range findings {
		checks = append(checks, f.Check)
	}
	assert.Equal(t, []string{
		"agent.kind.unsupported", "agent.command.required", "agent-client-protocol.mcp_config.wrong_type",
		"worker.ssh_strict_host_key_checking.invalid", "agent.effort.not_forwarded",
		"agent.kind.no_usage_reporting", "agent.kind.no_cost_estimate",
	}, checks)
	require.Error(t, domain.FindingsError(findings))
	assert.Contains(t, domain.FindingsError(findings).Error(), mcpType("a mapping").Message)
}

func TestParseMCPConfigPath(t *testing.T) {
	tests := []struct {
		name     string
		workflow string
		value    string
		want     string
	}{
		{"relative dot", "/repo/flows/WORKFLOW.md", "./mcp.json", "/repo/flows/mcp.json"},
		{"relative bare", "/repo/flows/WORKFLOW.md", "cfg/mcp.json", "/repo/flows/cfg/mcp.json"},
		{"relative parent", "/repo/flows/WORKFLOW.md", "../shared/mcp.json", "/repo/shared/mcp.json"},
		{"absolute kept", "/repo/flows/WORKFLOW.md", "/etc/mcp.json", "/etc/mcp.json"},
		{"empty is none", "/repo/flows/WORKFLOW.md", `""`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := front("agent:", "  command: x", "agent-client-protocol:", "  mcp_config: "+tt.value)
			cfg, findings := config.Parse([]byte(doc), tt.workflow)
			assert.Empty(t, findings)
			assert.Equal(t, tt.want, cfg.MCPConfig)
		})
	}
}

func TestParseMCPConfigRelativeWorkflowPath(t *testing.T) {
	wd, err := os.Getwd()
	require.NoError(t, err)
	doc := front("agent:", "  command: x", "agent-client-protocol:", "  mcp_config: mcp.json")
	cfg, _ := config.Parse([]byte(doc), filepath.Join("sub", "WORKFLOW.md"))
	assert.Equal(t, filepath.Join(wd, "sub", "mcp.json"), cfg.MCPConfig)
}

func TestParseEffortRecorded(t *testing.T) {
	tests := []struct{ value, want string }{
		{"high", "high"},
		{"'x'", "x"},
		{"[a]", "a list"},
		{"{a: 1}", "a mapping"},
		{"~", ""},
		{"[]", ""},
		{"{}", ""},
	}
	for _, tt := range tests {
		doc := front("agent:", "  command: x", "agent-client-protocol:", "  effort: "+tt.value)
		cfg, _ := config.Parse([]byte(doc), wf)
		assert.Equal(t, tt.want, cfg.Effort, "effort: %s", tt.value)
	}
}

func TestParseYAMLFeatures(t *testing.T) {
	tests := []struct {
		name  string
		doc   string
		turns int
		cmd   []string
	}{
		{"anchors and merge keys", front("base: &b {command: x, max_turns: 3}", "agent:", "  <<: *b", "  max_turns: 4"), 4, []string{"x"}},
		{"merge list, earlier wins", front("a: &a {max_turns: 1}", "b: &b {max_turns: 2, command: y}", "agent:", "  <<: [*a, *b]"), 1, []string{"y"}},
		{"alias value", front("n: &n 9", "agent:", "  command: x", "  max_turns: *n"), 9, []string{"x"}},
		{"flow style", front("agent: {command: [a, b], max_turns: 2}"), 2, []string{"a", "b"}},
		{"crlf", strings.ReplaceAll(front("agent:", "  command: x", "  max_turns: 6"), "\n", "\r\n"), 6, []string{"x"}},
		{"bom", "\xef\xbb\xbf" + front("agent:", "  command: x", "  max_turns: 7"), 7, []string{"x"}},
		{"delimiter with trailing blanks", "---  \nagent: {command: x, max_turns: 8}\n--- \t\nbody", 8, []string{"x"}},
		{"hex integer", front("agent:", "  command: x", "  max_turns: 0x10"), 16, []string{"x"}},
		{"no body", "---\nagent: {command: x, max_turns: 5}\n---", 5, []string{"x"}},
		{"self-referencing merge", front("agent: &a", "  command: x", "  max_turns: 2", "  <<: *a"), 2, []string{"x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, findings := config.Parse([]byte(tt.doc), wf)
			assert.Empty(t, findings)
			assert.Equal(t, tt.turns, cfg.MaxTurns)
			assert.Equal(t, tt.cmd, cfg.Command)
		})
	}
}

func TestParseStructuralFaults(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want domain.Finding
	}{
		{"unterminated", "---\nagent: {command: x}\nno end\n", errorF("workflow.front_matter.unterminated",
			`the front matter opened by "---" on line 1 is never closed by another "---" line`)},
		{"unterminated without newline", "---", errorF("workflow.front_matter.unterminated",
			`the front matter opened by "---" on line 1 is never closed by another "---" line`)},
		{"bad yaml", front("agent:", "  command: a: b"), errorF("workflow.yaml.invalid",
			"the front matter is not valid YAML: line 3: mapping values are not allowed in this context")},
		{"bad yaml first line", front("a: b: c"), errorF("workflow.yaml.invalid",
			"the front matter is not valid YAML: line 2: mapping values are not allowed in this context")},
		{"tab indentation", front("agent:", "\tcommand: x"), errorF("workflow.yaml.invalid",
			"the front matter is not valid YAML: line 3: found character that cannot start any token")},
		{"unclosed flow", front("agent: [", "x: 1"), errorF("workflow.yaml.invalid",
			"the front matter is not valid YAML: the flow sequence that starts at line 2: did not find expected ',' or ']'")},
		{"not utf-8", front("agent:", "  command: caf\xe9"), errorF("workflow.front_matter.not_utf8",
			"the front matter is not valid UTF-8 (line 3, column 15)")},
		{"utf-16 le", "\xff\xfe-\x00-\x00-\x00\n\x00", errorF("workflow.front_matter.not_utf8",
			"the file is UTF-16 encoded; save it as UTF-8")},
		{"utf-16 be", "\xfe\xff\x00-\x00-\x00-", errorF("workflow.front_matter.not_utf8",
			"the file is UTF-16 encoded; save it as UTF-8")},
		{"unclosed mapping", front("agent: {command: x", "other: 1"), errorF("workflow.yaml.invalid",
			"the front matter is not valid YAML: the flow mapping that starts at line 2: did not find expected ',' or '}'")},
		{"bad indentation", front("agent:", "  command: x", " max_turns: 1"), errorF("workflow.yaml.invalid",
			"the front matter is not valid YAML: the block mapping that starts at line 2: did not find expected key")},
		{"unknown anchor", front("agent:", "  command: x", "  max_turns: *nope"), errorF("workflow.yaml.invalid",
			"the front matter is not valid YAML: line 4: unknown anchor 'nope' referenced")},
		{"control character", front("agent:", "  command: a\x01b"), errorF("workflow.yaml.invalid",
			"the front matter is not valid YAML: it contains the control character U+0001 (line 3, column 13)")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, findings := config.Parse([]byte(tt.doc), wf)
			assert.Equal(t, []domain.Finding{tt.want}, findings)
			assert.Equal(t, domain.DefaultConfig(), cfg)
		})
	}
}

func TestParseNonUTF8BodyIsNotChecked(t *testing.T) {
	cfg, findings := config.Parse([]byte("---\nagent: {command: x}\n---\nprompt \xff\xfe\n"), wf)
	assert.Empty(t, findings)
	assert.Equal(t, []string{"x"}, cfg.Command)
}

func TestHostileInput(t *testing.T) {
	var block strings.Builder
	block.WriteString("---\nagent:\n  command: x\ndeep:\n")
	for i := 1; block.Len() < config.MaxFrontMatterBytes-4096; i++ {
		block.WriteString(strings.Repeat(" ", i+1) + "k:\n")
	}
	block.WriteString("---\n")

	laughs := []string{"agent:", "  command: x", "a: &a [x, x, x, x, x, x, x, x, x, x]"}
	for i := 'b'; i <= 'z'; i++ {
		prev := string(i - 1)
		laughs = append(laughs, string(i)+": &"+string(i)+" [*"+prev+", *"+prev+", *"+prev+", *"+prev+", *"+prev+
			", *"+prev+", *"+prev+", *"+prev+", *"+prev+", *"+prev+"]")
	}
	laughs = append(laughs, "agent-client-protocol:", "  effort: *z", "token_rates: *z")

	merges := []string{"m0: &m0 {max_turns: 1, command: x}"}
	for i := 1; i <= 30; i++ {
		p := "m" + strconv.Itoa(i-1)
		merges = append(merges, "m"+strconv.Itoa(i)+": &m"+strconv.Itoa(i)+" {<<: [*"+p+", *"+p+", *"+p+", *"+p+"]}")
	}
	merges = append(merges, "agent:", "  <<: *m30")

	tests := []struct {
		name  string
		doc   string
		check string // the first finding's check; "" for no findings
	}{
		{"deep flow nesting", "---\nagent: " + strings.Repeat("[", 20000) + "\n---\n", "workflow.yaml.invalid"},
		{"deep block nesting", block.String(), ""},
		{"billion laughs", front(laughs...), "agent.effort.not_forwarded"},
		{"merge bomb", front(merges...), "agent.command.required"},
		{"huge front matter", "---\n" + strings.Repeat("# padding line\n", config.MaxFrontMatterBytes/15+1) + "---\n", "workflow.front_matter.too_large"},
		{"huge unterminated", "---\n" + strings.Repeat("x: 1\n", config.MaxFrontMatterBytes/5+1), "workflow.front_matter.too_large"},
		{"many keys", "---\nagent: {command: x}\n" + manyKeys(50000) + "---\n", ""},
		{"long line", front("agent:", "  command: x "+strings.Repeat("a", 900000)), ""},
		{"nul bytes", front("agent:", "  command: x\x00"), "workflow.yaml.invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Parse returns (the test binary's -timeout bounds a hang);
			// how fast is a benchmark's matter, not a test's.
			_, findings := config.Parse([]byte(tt.doc), wf)
			if tt.check == "" {
				assert.Empty(t, findings)
				return
			}
			require.NotEmpty(t, findings)
			assert.Equal(t, tt.check, findings[0].Check, "%+v", findings)
		})
	}
}

func manyKeys(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString("k" + strconv.Itoa(i) + ": v\n")
	}
	return b.String()
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "WORKFLOW.md")
	require.NoError(t, os.WriteFile(path, []byte(front("agent:", "  command: gemini --acp",
		"agent-client-protocol:", "  mcp_config: tools.json")), 0o600))
	cfg, findings, err := config.Load(path)
	require.NoError(t, err)
	assert.Empty(t, findings)
	assert.Equal(t, filepath.Join(dir, "tools.json"), cfg.MCPConfig)
	assert.Equal(t, []string{"gemini", "--acp"}, cfg.Command)
}

func TestLoadUnreadable(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "WORKFLOW.md")
	_, _, err := config.Load(missing)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.Equal(t, "read "+missing+": no such file or directory", err.Error())
	for _, path := range []string{missing, dir} {
		cfg, findings, err := config.Load(path)
		require.Error(t, err)
		assert.True(t, strings.HasPrefix(err.Error(), "read "+path+": "), err.Error())
		assert.Equal(t, 1, strings.Count(err.Error(), path), err.Error())
		assert.Nil(t, findings)
		assert.Equal(t, domain.DefaultConfig(), cfg)
	}
}

func TestLoadTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "WORKFLOW.md")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(config.MaxFileBytes+1)) // sparse
	require.NoError(t, f.Close())
	_, findings, err := config.Load(path)
	require.NoError(t, err)
	assert.Equal(t, []domain.Finding{errorF("workflow.too_large", "the file is larger than the 16777216-byte limit")}, findings)

	_, findings = config.Parse(make([]byte, config.MaxFileBytes+1), wf)
	assert.Equal(t, "workflow.too_large", findings[0].Check)
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(front("agent:", "  command: gemini --acp", "  max_turns: 3",
		"agent-client-protocol:", "  mcp_config: ./m.json", "  effort: x",
		"worker:", "  ssh_hosts: [h]", "token_rates: {agent-client-protocol: {a: 1}}")))
	f.Add([]byte("---\na: &a {<<: *a}\nagent: {<<: [*a, *a]}\n---\n"))
	f.Add([]byte("---\nagent: [\n---\n"))
	f.Add([]byte("---\n\xff\n---\n"))
	f.Add([]byte("no front matter"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, findings := config.Parse(data, wf)
		for _, fd := range findings {
			if fd.Check == "" || fd.Message == "" {
				t.Fatalf("finding without a check or message: %+v", fd)
			}
			if fd.Severity != domain.SeverityError && fd.Severity != domain.SeverityWarning {
				t.Fatalf("finding with severity %q", fd.Severity)
			}
		}
		// Validate's verdict on the returned Config is part of Parse's.
		for _, v := range cfg.Validate() {
			if v.Check == domain.CheckCommandRequired {
				continue // may be withheld in favour of a precise loader finding
			}
			if !slices.Contains(findings, v) && !domain.HasErrors(findings) {
				t.Fatalf("Validate finding %+v missing from %+v", v, findings)
			}
		}
	})
}

// TestParseOutputSchema: agent.output_schema is a path resolved like
// mcp_config, agent.output_retries a count that reaches the session's
// settings (docs/behaviour.md#structured-results).
func TestParseOutputSchema(t *testing.T) {
	doc := front("agent:", "  command: x", "  output_schema: ./result.schema.json", "  output_retries: 2")
	cfg, findings := config.Parse([]byte(doc), "/repo/flows/WORKFLOW.md")
	assert.Empty(t, findings)
	assert.Equal(t, "/repo/flows/result.schema.json", cfg.OutputSchema)
	assert.Equal(t, 2, cfg.OutputRetries)
	assert.Equal(t, 2, cfg.SessionSettings().OutputRetries)
	assert.Nil(t, cfg.SessionSettings().OutputSchema, "the domain reads no file")
}

// TestParseOutputSchemaTurns: agent.output_schema_turns reaches the
// session's settings; absent it is each; any other value is
// agent.output_schema_turns.invalid, with validate's message; a value of
// another YAML type is config.wrong_type.
func TestParseOutputSchemaTurns(t *testing.T) {
	for _, c := range []struct {
		line  string
		want  domain.ResultTurns
		check string
		msg   string
	}{
		{line: "", want: ""},
		{line: "  output_schema_turns: each", want: domain.ResultTurnsEach},
		{line: "  output_schema_turns: last", want: domain.ResultTurnsLast},
		{line: "  output_schema_turns: first", want: "first", check: domain.CheckOutputSchemaTurnsInvalid,
			msg: `agent.output_schema_turns "first" is neither each nor last`},
		{line: "  output_schema_turns: [last]", want: "", check: config.CheckWrongType},
	} {
		t.Run(c.line, func(t *testing.T) {
			lines := []string{"agent:", "  command: x"}
			if c.line != "" {
				lines = append(lines, c.line)
			}
			cfg, findings := config.Parse([]byte(front(lines...)), "/repo/WORKFLOW.md")
			assert.Equal(t, c.want, cfg.SessionSettings().OutputSchemaTurns)
			if c.check == "" {
				assert.Empty(t, findings)
				assert.True(t, cfg.SessionSettings().OutputSchemaTurns.EachTurn() == (c.want != domain.ResultTurnsLast))
				return
			}
			require.Len(t, findings, 1, "%+v", findings)
			assert.Equal(t, domain.SeverityError, findings[0].Severity)
			assert.Equal(t, c.check, findings[0].Check)
			if c.msg != "" {
				assert.Equal(t, c.msg, findings[0].Message)
			}
		})
	}
}
