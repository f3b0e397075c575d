package domain_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/acpdrive/acpdrive/domain"
)

// TestReasonOf: the reason of an agent_not_found error is read through any
// wrapping; one set nowhere reads configuration_invalid; other kinds and
// other errors have none.
func TestReasonOf(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want domain.Reason
	}{
		{"set", domain.NewError(domain.KindAgentNotFound, "x").WithReason(domain.ReasonNotOffered), domain.ReasonNotOffered},
		{"wrapped", fmt.Errorf("start: %w", domain.NewError(domain.KindAgentNotFound, "x").WithReason(domain.ReasonProgramMissing)), domain.ReasonProgramMissing},
		{"unset", domain.NewError(domain.KindAgentNotFound, "x"), domain.ReasonConfigurationInvalid},
		{"other kind", domain.NewError(domain.KindResponseError, "x"), ""},
		{"not an agent error", errors.New("x"), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, domain.ReasonOf(tc.err))
		})
	}
}
