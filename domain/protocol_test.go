package domain_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/domain"
)

func TestProtocolChoice(t *testing.T) {
	tests := []struct {
		in        string
		want      domain.ProtocolChoice
		requested int
		accepts   []int
	}{
		{"", domain.ProtocolV1, 1, []int{1}},
		{"1", domain.ProtocolV1, 1, []int{1}},
		{"2", domain.ProtocolV2, 2, []int{2}},
		{"auto", domain.ProtocolAuto, 2, []int{1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			p, err := domain.ParseProtocolChoice(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, p)
			assert.Equal(t, tt.requested, p.Requested())
			assert.Equal(t, tt.accepts, p.Accepted())
			for v := 0; v <= 3; v++ {
				assert.Equal(t, v == 1 && tt.accepts[0] == 1 || v == 2 && tt.accepts[len(tt.accepts)-1] == 2, p.Accepts(v), "version %d", v)
			}
		})
	}
	_, err := domain.ParseProtocolChoice("v2")
	assert.EqualError(t, err, `protocol "v2": want 1, 2 or auto`)
}
