package config_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/acpdrive/acpdrive/config"
	"github.com/acpdrive/acpdrive/domain"
)

func TestParseConfirmToolServers(t *testing.T) {
	tests := []struct {
		name        string
		lines       []string
		wantConfirm bool
		wantBound   time.Duration
		findings    []domain.Finding
	}{
		{"absent", nil, false, 0, nil},
		{"true with a bound", []string{"  confirm_tool_servers: true", "  confirm_tool_servers_timeout_ms: 2500"}, true, 2500 * time.Millisecond, nil},
		{"false", []string{"  confirm_tool_servers: false"}, false, 0, nil},
		{"null is false", []string{"  confirm_tool_servers:"}, false, 0, nil},
		{"a string is refused", []string{`  confirm_tool_servers: "yes"`}, false, 0, []domain.Finding{
			errorF("config.wrong_type", "agent-client-protocol.confirm_tool_servers: expected a boolean, found a string (line 5)")}},
		{"a bound that is no integer", []string{"  confirm_tool_servers: true", "  confirm_tool_servers_timeout_ms: soon"}, true, 0, []domain.Finding{
			errorF("config.wrong_type", "agent-client-protocol.confirm_tool_servers_timeout_ms: expected an integer, found a string (line 6)")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := append([]string{"agent:", "  command: x", "agent-client-protocol:"}, tt.lines...)
			cfg, findings := config.Parse([]byte(front(lines...)), wf)
			assert.Equal(t, tt.findings, findings)
			assert.Equal(t, tt.wantConfirm, cfg.ConfirmToolServers)
			assert.Equal(t, tt.wantBound, cfg.ConfirmToolServersTimeout)
		})
	}
}

func TestEffectiveConfirmToolServersTimeout(t *testing.T) {
	c := domain.DefaultConfig()
	assert.Equal(t, domain.DefaultConfirmToolServersTimeout, c.EffectiveConfirmToolServersTimeout())
	c.ConfirmToolServersTimeout = -time.Second
	assert.Equal(t, domain.DefaultConfirmToolServersTimeout, c.EffectiveConfirmToolServersTimeout())
	c.ConfirmToolServersTimeout = 3 * time.Second
	assert.Equal(t, 3*time.Second, c.EffectiveConfirmToolServersTimeout())
}
