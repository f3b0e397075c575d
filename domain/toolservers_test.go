package domain_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
)

func TestCapabilityConfirmation(t *testing.T) {
	tests := []struct {
		name          string
		remote        bool
		lowerFirst    bool
		lowerAfter    bool
		wantConfirm   bool
		wantConfirmed bool
	}{
		{"confirmed", false, false, false, true, true},
		{"a gap cannot be confirmed", true, false, false, false, false},
		{"lowered before", false, true, false, false, false},
		{"lowering clears it", false, false, true, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := domain.NewCapabilities(tt.remote, false)
			if tt.lowerFirst {
				c.Lower(domain.CapToolServers)
			}
			assert.Equal(t, tt.wantConfirm, c.Confirm(domain.CapToolServers))
			if tt.lowerAfter {
				c.Lower(domain.CapToolServers)
			}
			assert.Equal(t, tt.wantConfirmed, c.Confirmed(domain.CapToolServers))
			assert.False(t, c.Confirmed(domain.CapTokenCounts))
			raw, err := json.Marshal(c)
			require.NoError(t, err)
			assert.Equal(t, tt.wantConfirmed, strings.Contains(string(raw), `"confirmed":true`))
		})
	}
	var c domain.Capabilities
	assert.False(t, c.Confirm("no such label"))
}
