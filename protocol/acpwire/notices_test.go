package acpwire_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/protocol/acpwire"
)

// TestNoticesOffered: the initialize acpdrive sends offers
// clientCapabilities.session.notices as an empty object; without it the
// capabilities are as before.
func TestNoticesOffered(t *testing.T) {
	cases := []struct {
		name string
		caps acpwire.ClientCapabilities
		want string
	}{
		{"offered", acpwire.ClientCapabilities{Session: acpwire.NoticesOffered()},
			`{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false,"session":{"notices":{}}}`},
		{"none", acpwire.ClientCapabilities{},
			`{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := json.Marshal(c.caps)
			require.NoError(t, err)
			assert.JSONEq(t, c.want, string(b))
		})
	}
}
