package remotecmd

import (
	"strings"
	"testing"
)

func TestPGIDFilter(t *testing.T) {
	long := strings.Repeat("x", maxMarkerScan+1)
	tests := []struct {
		name   string
		writes []string
		pgid   int64
		kept   string
	}{
		{"marker first", []string{PGIDMarker + "42\nruntime says\n"}, 42, "runtime says\n"},
		{"marker split across writes", []string{"acpdrive-p", "gid 7", "\nrest"}, 7, "rest"},
		{"ssh's own lines before it", []string{"Warning: added key\n", PGIDMarker + "9\r\n", "x\n"}, 9, "Warning: added key\nx\n"},
		{"no marker", []string{"ssh: connect refused\n"}, 0, "ssh: connect refused\n"},
		{"a bad ID is not the marker", []string{PGIDMarker + "1\n", PGIDMarker + "abc\n"}, 0, PGIDMarker + "1\n" + PGIDMarker + "abc\n"},
		{"only the first marker is taken", []string{PGIDMarker + "5\n" + PGIDMarker + "6\n"}, 5, PGIDMarker + "6\n"},
		{"search gives up after the bound", []string{long + "\n" + PGIDMarker + "5\n"}, 0, long + "\n" + PGIDMarker + "5\n"},
		{"an unfinished line is kept at the end", []string{"partial"}, 0, "partial"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var kept strings.Builder
			f := &PGIDFilter{W: &kept}
			for _, w := range tt.writes {
				if n, err := f.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			f.Flush()
			if f.PGID() != tt.pgid || kept.String() != tt.kept {
				t.Fatalf("pgid %d, kept %q; want %d, %q", f.PGID(), kept.String(), tt.pgid, tt.kept)
			}
		})
	}
}

// TestKillRounds: the group kill's round count is read from its output.
func TestKillRounds(t *testing.T) {
	for out, want := range map[string]int{"0\n": 0, "3\n": 3, " 40 ": 40} {
		if n, ok := KillRounds([]byte(out)); !ok || n != want {
			t.Errorf("KillRounds(%q) = %d, %v; want %d", out, n, ok, want)
		}
	}
	for _, out := range []string{"", "x", "-1"} {
		if _, ok := KillRounds([]byte(out)); ok {
			t.Errorf("KillRounds(%q) read a count", out)
		}
	}
}
