package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSecondSignalStopsWithinTheDocumentedBound: the CLI gives Stop
// stop_grace + 10 s (docs/behaviour.md#bounds) on every path, the second
// signal's included (it used a fixed 30 s).
func TestSecondSignalStopsWithinTheDocumentedBound(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "behaviour.md"))
	require.NoError(t, err)
	require.Contains(t, strings.Join(strings.Fields(string(doc)), " "), "The CLI gives `Stop` `stop_grace + 10 s`")
	assert.Equal(t, 10*time.Second, stopMargin)
	grace := 45 * time.Second
	in := newInterrupter(make(chan os.Signal), nil, grace+stopMargin, nil)
	defer in.close()
	assert.Equal(t, grace+stopMargin, in.stopBound, "the second signal's Stop is bounded like the run's own")
}
