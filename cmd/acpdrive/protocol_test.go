package main_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/acpdrive/acpdrive/internal/testsupport/testbin"
)

// TestRunProtocol: --protocol picks the ACP version; run_result and probe
// report the one in use (docs/behaviour.md#protocol-v2).
func TestRunProtocol(t *testing.T) {
	bin := testbin.Path(t)
	cases := []struct {
		client, agent string
		code, version int
		message       string
	}{
		{"1", "1", 0, 1, ""},
		{"2", "2", 0, 2, ""},
		{"auto", "2", 0, 2, ""},
		{"auto", "1", 0, 1, ""},
		{"1", "2", 3, 0, "agent does not support protocol version 1; it supports 2"},
		{"2", "1", 3, 0, "agent answered protocol version 1; --protocol 2 accepts only 2"},
	}
	for _, c := range cases {
		t.Run(c.client+"-"+c.agent, func(t *testing.T) {
			stdout, stderr, code := runIn(t, t.TempDir(), "run", "--json", "--protocol", c.client,
				"--command", bin+" agent --protocol "+c.agent, "hello", "again")
			require.Equal(t, c.code, code, stderr)
			lines := strings.Split(strings.TrimSpace(stdout), "\n")
			var last struct {
				Type            string `json:"type"`
				Message         string `json:"message"`
				ProtocolVersion int    `json:"protocol_version"`
				Turns           int    `json:"turns"`
			}
			require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &last))
			if c.code != 0 {
				assert.Equal(t, "startup_failed", last.Type)
				assert.Equal(t, c.message, last.Message)
				return
			}
			assert.Equal(t, "run_result", last.Type)
			assert.Equal(t, 2, last.Turns)
			assert.Equal(t, c.version, last.ProtocolVersion)
		})
	}
	t.Run("probe", func(t *testing.T) {
		stdout, stderr, code := runIn(t, t.TempDir(), "probe", "--json", "--protocol", "2", "--command", bin+" agent --protocol 2")
		require.Equal(t, 0, code, stderr)
		var rep struct {
			ProtocolVersion int `json:"protocol_version"`
		}
		require.NoError(t, json.Unmarshal([]byte(stdout), &rep), stdout)
		assert.Equal(t, 2, rep.ProtocolVersion)
	})
	t.Run("bad value", func(t *testing.T) {
		_, stderr, code := runIn(t, t.TempDir(), "run", "--protocol", "3", "hi")
		assert.Equal(t, 2, code)
		assert.Contains(t, stderr, `protocol "3": want 1, 2 or auto`)
	})
}
