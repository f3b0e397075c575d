package main

import (
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExportWanted: a signal is exported only when an endpoint is set for
// it, the SDK is not disabled and its exporter is not "none".
func TestExportWanted(t *testing.T) {
	cases := []struct {
		name            string
		env             map[string]string
		traces, metrics bool
	}{
		{"nothing set", nil, false, false},
		{"common endpoint", map[string]string{envEndpoint: "http://127.0.0.1:1"}, true, true},
		{"traces only", map[string]string{envTracesEndpoint: "http://127.0.0.1:1/v1/traces"}, true, false},
		{"metrics only", map[string]string{envMetricsEndpoint: "http://127.0.0.1:1/v1/metrics"}, false, true},
		{"blank endpoint", map[string]string{envEndpoint: "  "}, false, false},
		{"sdk disabled", map[string]string{envEndpoint: "http://127.0.0.1:1", envSDKDisabled: "TRUE"}, false, false},
		{"metrics exporter none", map[string]string{envEndpoint: "http://127.0.0.1:1", envMetricsExporter: "none"}, true, false},
		{"traces exporter none", map[string]string{envEndpoint: "http://127.0.0.1:1", envTracesExporter: "none"}, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			getenv := func(k string) string { return c.env[k] }
			assert.Equal(t, c.traces, exportWanted(getenv, envTracesEndpoint, envTracesExporter))
			assert.Equal(t, c.metrics, exportWanted(getenv, envMetricsEndpoint, envMetricsExporter))
			tel, err := newTelemetry(context.Background(), getenv, io.Discard)
			require.NoError(t, err)
			assert.Equal(t, c.traces, tel.tp != nil)
			assert.Equal(t, c.metrics, tel.mp != nil)
			assert.Equal(t, c.traces || c.metrics, len(tel.options()) == 1)
			tel.shutdown(io.Discard)
		})
	}
}
