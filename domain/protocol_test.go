package domain_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
)

func TestProtocolChoice(t *testing.T) {
	tests := []struct {
		in   string
		want domain.ProtocolChoice
	}{
		{"", domain.ProtocolV1},
		{"1", domain.ProtocolV1},
		{"2", domain.ProtocolV2},
		{"auto", domain.ProtocolAuto},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			p, err := domain.ParseProtocolChoice(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, p)
		})
	}
	_, err := domain.ParseProtocolChoice("v2")
	assert.EqualError(t, err, `protocol "v2": want 1, 2 or auto`)
}
