package main_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRunJSONCarriesTheReplyOriginAndOutcome: with --json, turn_result
// carries the turn's whole reply, every notification its origin, and the
// closing event the result's outcome (docs/behaviour.md#turn-result,
// #origin).
func TestRunJSONCarriesTheReplyOriginAndOutcome(t *testing.T) {
	long := strings.Repeat("x", 700)
	stdout, stderr, code := runIn(t, t.TempDir(), "run", "--json", long)
	require.Equal(t, 0, code, stderr)
	var sawAgent, sawOwn, sawClosing, sawResult bool
	for _, raw := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var l map[string]any
		require.NoError(t, json.Unmarshal([]byte(raw), &l), raw)
		switch l["type"] {
		case "notification":
			switch l["origin"] {
			case "agent":
				sawAgent = true
			case "acpdrive":
				sawOwn = true
			default:
				t.Errorf("a notification without origin: %s", raw)
			}
		case "turn_completed":
			sawClosing = true
			assert.Equal(t, "turn_completed", l["outcome"], raw)
		case "turn_result":
			sawResult = true
			assert.Equal(t, long, l["reply"], "the whole reply, beyond 500 runes")
		}
	}
	assert.True(t, sawAgent && sawOwn && sawClosing && sawResult, stdout)
}
