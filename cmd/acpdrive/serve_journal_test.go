package main_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestServeJournalRefusals: a journal on disk that cannot be is refused
// before anything listens (exit 2).
func TestServeJournalRefusals(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"no bound":     {[]string{"--journal-dir", dir, "--journal-max", "0"}, "--journal-max must be above zero"},
		"no directory": {[]string{"--journal-dir", filepath.Join(dir, "missing")}, "is not a directory"},
	} {
		t.Run(name, func(t *testing.T) {
			args := append([]string{"serve", "--listen", "http://127.0.0.1:0"}, tc.args...)
			stdout, stderr, code := runIn(t, dir, append(args, "--", "true")...)
			assert.Equal(t, 2, code)
			assert.Empty(t, stdout, "nothing listens, so no URL")
			assert.Contains(t, stderr, tc.want)
		})
	}
}
