package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/internal/testsupport/mcpstarter"
	"github.com/acpdrive/acpdrive/internal/testsupport/proctest"
	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
)

// runResultToolServers decodes run_result's tool_servers and gaps.
type runResultToolServers struct {
	Type           string                  `json:"type"`
	AgentPID       int                     `json:"agent_pid"`
	CapabilityGaps []string                `json:"capability_gaps"`
	ToolServers    *domain.ToolServerCheck `json:"tool_servers"`
	Survivors      []any                   `json:"survivors"`
}

func lastRunResult(t *testing.T, stdout string) runResultToolServers {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	var r runResultToolServers
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &r), stdout)
	require.Equal(t, "run_result", r.Type, stdout)
	return r
}

// starterCommand is the fake runtime that starts the declared stdio
// servers: this test binary (see TestMain). The beacon it starts is the
// CLI's own hidden mcp-beacon subcommand.
func starterCommand() string { return os.Args[0] + " " + mcpstarter.Subcommand }

func TestRunConfirmToolServersOnTheReferenceAgent(t *testing.T) {
	stdout, stderr, code := runIn(t, t.TempDir(), "run", "--json", "--confirm-tool-servers", "--confirm-tool-servers-timeout", "500ms", "hello")
	require.Equal(t, 0, code, stderr)
	notice := domain.ToolServersNotConfirmed(500 * time.Millisecond)
	lines := parseLines(t, stdout)
	var notices []string
	for _, l := range ofType(lines, "notification") {
		notices = append(notices, l.Message)
	}
	require.GreaterOrEqual(t, len(notices), 2, stdout)
	assert.Equal(t, "this session started with a declared capability gap in: tool servers, token counts, session continuation", notices[0])
	assert.Equal(t, notice, notices[1])
	r := lastRunResult(t, stdout)
	assert.Contains(t, r.CapabilityGaps, "tool servers")
	assert.Equal(t, &domain.ToolServerCheck{BoundMS: 500, Reason: notice}, r.ToolServers)
	proctest.WaitGroupEmpty(t, r.AgentPID, 2*time.Second)
}

func TestRunConfirmToolServersFromTheWorkflow(t *testing.T) {
	dir := t.TempDir()
	wf := filepath.Join(dir, "WORKFLOW.md")
	require.NoError(t, os.WriteFile(wf, []byte("---\nagent:\n  command: "+starterCommand()+
		"\nagent-client-protocol:\n  confirm_tool_servers: true\n  confirm_tool_servers_timeout_ms: 3600000\n---\nbody\n"), 0o600))
	stdout, stderr, code := runIn(t, dir, "run", "--json", "--workflow", wf, "hello")
	require.Equal(t, 0, code, stderr)
	r := lastRunResult(t, stdout)
	assert.NotContains(t, r.CapabilityGaps, "tool servers")
	assert.Equal(t, &domain.ToolServerCheck{Confirmed: true, MCPClient: "acpdrive-mcpstarter/1", BoundMS: 3600000}, r.ToolServers)
	assert.Empty(t, r.Survivors)
	assert.NotContains(t, stdout, domain.MsgToolServersNotConfirmedPrefix)
	// The runtime and the beacon it started are gone.
	proctest.WaitGroupEmpty(t, r.AgentPID, 2*time.Second)

	// --confirm-tool-servers=false overrides the file: nothing is declared.
	stdout, stderr, code = runIn(t, dir, "run", "--json", "--workflow", wf, "--confirm-tool-servers=false", "hello")
	require.Equal(t, 0, code, stderr)
	assert.Nil(t, lastRunResult(t, stdout).ToolServers)
}

func TestRunConfirmToolServersHuman(t *testing.T) {
	stdout, stderr, code := runIn(t, t.TempDir(), "run", "--confirm-tool-servers", "--command", starterCommand(), "hello")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "; tool servers: confirmed (the runtime's MCP client acpdrive-mcpstarter/1 initialized the beacon)")
}

func TestProbeConfirmToolServers(t *testing.T) {
	cmd := exec.Command(testbin.Path(t), "probe", "--json", "--confirm-tool-servers", "--command", starterCommand())
	cmd.Dir = t.TempDir()
	out, err := cmd.Output()
	require.NoError(t, err)
	var report struct {
		AgentPID     int                     `json:"agent_pid"`
		ToolServers  *domain.ToolServerCheck `json:"tool_servers"`
		Capabilities []map[string]any        `json:"capabilities"`
	}
	require.NoError(t, json.Unmarshal(out, &report), string(out))
	require.NotNil(t, report.ToolServers)
	assert.True(t, report.ToolServers.Confirmed)
	assert.Equal(t, map[string]any{"label": "tool servers", "state": "protocol", "confirmed": true}, report.Capabilities[0])
	proctest.WaitGroupEmpty(t, report.AgentPID, 2*time.Second)

	human, _, code := runIn(t, t.TempDir(), "probe", "--confirm-tool-servers", "--confirm-tool-servers-timeout", "300ms")
	require.Equal(t, 0, code)
	assert.Contains(t, human, "tool servers (confirmation)")
	assert.Contains(t, human, "not confirmed within 300ms")
}

func TestBeaconSubcommandRefusesArguments(t *testing.T) {
	_, stderr, code := runIn(t, t.TempDir(), "mcp-beacon", "extra")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "takes no arguments")
}
