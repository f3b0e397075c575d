package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/acpdrive/acpdrive/adapters/copilot_measure"
	"github.com/acpdrive/acpdrive/adapters/gemini_measure"
	"github.com/acpdrive/acpdrive/ports"
)

// TestNoMeasureKeepsWireUsageReading: --no-measure arms no source, but
// what a source knows about reading the wire's usage (Copilot's running
// total) is kept, on a source that claims nothing and names no runtime.
func TestNoMeasureKeepsWireUsageReading(t *testing.T) {
	kept := wireUsageOnly([]ports.MeasurementSource{
		gemini_measure.New(gemini_measure.Options{}),
		copilot_measure.New(copilot_measure.Options{}),
	})
	if assert.Len(t, kept, 1) {
		src := kept[0]
		r, ok := src.(ports.WireUsageReader)
		assert.True(t, ok && r.WireUsageIsRunningTotal("Copilot"))
		assert.False(t, src.Claims([]string{"copilot", "--acp"}))
		assert.Empty(t, src.RuntimeName())
		_, err := src.Arm(context.Background())
		assert.Error(t, err)
	}
}
