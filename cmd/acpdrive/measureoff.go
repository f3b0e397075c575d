package main

import (
	"context"
	"errors"

	"github.com/acpdrive/acpdrive/ports"
)

// wireUsageOnly keeps, of sources, only what they know about reading the
// usage on the ACP wire (ports.WireUsageReader): --no-measure arms no
// source, but a runtime whose prompt result carries a running total is
// still read as one (docs/behaviour.md#token-accounting).
func wireUsageOnly(sources []ports.MeasurementSource) []ports.MeasurementSource {
	var kept []ports.MeasurementSource
	for _, src := range sources {
		if r, ok := src.(ports.WireUsageReader); ok {
			kept = append(kept, unarmed{r})
		}
	}
	return kept
}

// unarmed is a measurement source that claims nothing, names no runtime
// (so no handshake settles on it) and cannot be armed.
type unarmed struct{ ports.WireUsageReader }

func (unarmed) Name() string         { return "wire_usage_only" }
func (unarmed) RuntimeName() string  { return "" }
func (unarmed) Claims([]string) bool { return false }
func (unarmed) Arm(context.Context) (ports.Measurement, error) {
	return nil, errors.New("a source kept for its wire usage only is never armed")
}
