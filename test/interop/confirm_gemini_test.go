//go:build interop

package interop

import (
	"testing"

	"github.com/acpdrive/acpdrive/domain"
	"github.com/acpdrive/acpdrive/test/fakes"
)

// Gemini CLI in an untrusted workspace answers session/new with success
// and starts none of the declared MCP servers: the beacon is not
// confirmed, "tool servers" is lowered and the first turn says why.
func TestConfirmGeminiUntrustedWorkspace(t *testing.T) {
	t.Parallel()
	confirmCase{
		rig: func(t *testing.T) (*rig, *fakes.Server) {
			r, srv := geminiRig(t, true)
			r.setenv("GEMINI_CLI_TRUST_WORKSPACE", "false")
			return r, srv
		},
		reply:     "Hello from an untrusted workspace.",
		confirmed: false,
		gaps:      []domain.CapabilityLabel{domain.CapTokenCounts},
		usage:     fakes.Usage{Input: 100, Output: 6},
	}.run(t)
}

// Gemini CLI in a trusted workspace starts the beacon during session/new.
func TestConfirmGeminiTrustedWorkspace(t *testing.T) {
	t.Parallel()
	confirmCase{
		rig: func(t *testing.T) (*rig, *fakes.Server) {
			return geminiRig(t, true) // GEMINI_CLI_TRUST_WORKSPACE=true
		},
		reply:     "Hello from a trusted workspace.",
		confirmed: true,
		hidden:    []string{"McpResource", "mcp_resource"},
		mcpClient: "gemini-cli-mcp-client/0.61.0",
		gaps:      []domain.CapabilityLabel{domain.CapTokenCounts},
		usage:     fakes.Usage{Input: 100, Output: 6},
	}.run(t)
}
