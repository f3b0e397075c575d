package config_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/acpdrive/acpdrive/config"
	"github.com/acpdrive/acpdrive/domain"
)

func TestParseProtocol(t *testing.T) {
	tests := []struct {
		name     string
		line     string
		want     domain.ProtocolChoice
		findings []domain.Finding
	}{
		{"absent", "", domain.ProtocolV1, nil},
		{"1", "  protocol: 1", domain.ProtocolV1, nil},
		{"2", "  protocol: 2", domain.ProtocolV2, nil},
		{"auto", "  protocol: auto", domain.ProtocolAuto, nil},
		{"a quoted 2", `  protocol: "2"`, domain.ProtocolV2, nil},
		{"null is the default", "  protocol:", domain.ProtocolV1, nil},
		{"3 is refused", "  protocol: 3", domain.ProtocolV1, []domain.Finding{
			errorF(domain.CheckProtocolInvalid, `agent.protocol "3": want 1, 2 or auto`)}},
		{"a list is refused", "  protocol: [2]", domain.ProtocolV1, []domain.Finding{
			errorF("config.wrong_type", `agent.protocol: expected 1, 2 or "auto", found a list (line 4)`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := []string{"agent:", "  command: x"}
			if tt.line != "" {
				lines = append(lines, tt.line)
			}
			cfg, findings := config.Parse([]byte(front(lines...)), wf)
			assert.Equal(t, tt.findings, findings)
			assert.Equal(t, tt.want, cfg.SessionSettings().Protocol)
		})
	}
}
