package domain_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/acpdrive/acpdrive/domain"
)

// TestSessionSettingsValidateProtocol: SessionSettings refuses a protocol
// choice Config refuses, with the same check and message, so a library
// caller's "3" does not run v1 silently.
func TestSessionSettingsValidateProtocol(t *testing.T) {
	t.Parallel()
	for _, p := range []domain.ProtocolChoice{"", domain.ProtocolV1, domain.ProtocolV2, domain.ProtocolAuto, "3", "v2", "AUTO"} {
		set := domain.DefaultSessionSettings()
		set.Protocol = p
		cfg := domain.Config{Command: []string{"runtime"}, StopGrace: set.StopGrace, Protocol: string(p)}
		assert.Equal(t, cfg.Validate(), set.Validate(), "protocol %q", p)
	}
	set := domain.DefaultSessionSettings()
	set.Protocol = "3"
	assert.Equal(t, []domain.Finding{{Severity: domain.SeverityError, Check: domain.CheckProtocolInvalid,
		Message: `agent.protocol "3": want 1, 2 or auto`}}, set.Validate())
}
