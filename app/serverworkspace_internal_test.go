package app

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/acpdrive/acpdrive/protocol/acpwire"
)

// TestAnnouncedWorkspace: only an absolute
// agentCapabilities._meta.qwen.workspaceCwd is a workspace the server
// announces (docs/behaviour.md#network).
func TestAnnouncedWorkspace(t *testing.T) {
	for _, tc := range []struct {
		name, meta, want string
	}{
		{"qwen serve's", `{"qwen":{"connectionId":"c","workspaceCwd":"/srv/w","methods":[]}}`, "/srv/w"},
		{"none", ``, ""},
		{"another vendor's", `{"other":{"workspaceCwd":"/srv/w"}}`, ""},
		{"relative", `{"qwen":{"workspaceCwd":"srv/w"}}`, ""},
		{"not a string", `{"qwen":{"workspaceCwd":7}}`, ""},
		{"not an object", `[1]`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := acpwire.InitializeResponse{AgentCapabilities: acpwire.AgentCapabilities{Meta: json.RawMessage(tc.meta)}}
			assert.Equal(t, tc.want, announcedWorkspace(resp))
		})
	}
}
