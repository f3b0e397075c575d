package localexec

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestTailRing(t *testing.T) {
	tests := []struct {
		name   string
		writes []int // sizes of successive writes
	}{
		{"nothing", nil},
		{"small", []int{10}},
		{"exactly full", []int{stderrTailSize}},
		{"full in pieces", []int{4096, 4096}},
		{"one over", []int{stderrTailSize, 1}},
		{"wraps several times", []int{3000, 3000, 3000, 3000, 3000, 7}},
		{"one huge write", []int{3 * stderrTailSize}},
		{"huge after small", []int{5, stderrTailSize + 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r tailRing
			var all []byte
			b := byte(0)
			for _, n := range tt.writes {
				chunk := make([]byte, n)
				for i := range chunk {
					chunk[i] = 'a' + b%26
					b++
				}
				all = append(all, chunk...)
				if got, err := r.Write(chunk); got != n || err != nil {
					t.Fatalf("Write(%d bytes) = %d, %v", n, got, err)
				}
			}
			want := all
			if len(want) > stderrTailSize {
				want = want[len(want)-stderrTailSize:]
			}
			got, truncated := r.Tail()
			if !bytes.Equal(got, want) {
				t.Fatalf("Tail() = %d bytes, not the last %d written", len(got), len(want))
			}
			if wantCut := len(all) > stderrTailSize; truncated != wantCut {
				t.Fatalf("truncated = %v, want %v", truncated, wantCut)
			}
		})
	}
}

func TestLineLogger(t *testing.T) {
	long := strings.Repeat("z", maxLoggedStderrLine+10)
	tests := []struct {
		name   string
		writes []string
		want   []string // logged lines, each as "line|cut"
	}{
		{"whole lines", []string{"a\nb\n"}, []string{"a|false", "b|false"}},
		{"split across writes", []string{"he", "llo\nwor", "ld"}, []string{"hello|false", "world|false"}},
		{"blank lines skipped, CR trimmed", []string{"\n\r\nx\r\n"}, []string{"x|false"}},
		{"long line cut", []string{long + "\nok\n"}, []string{long[:maxLoggedStderrLine] + "|true", "ok|false"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &captureHandler{}
			l := &lineLogger{logger: slog.New(h), pid: 7}
			for _, w := range tt.writes {
				if n, err := l.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			l.flush()
			var got []string
			for _, rec := range h.records() {
				if rec.Message != "agent stderr line" || rec.Level != slog.LevelDebug {
					t.Fatalf("record %q at %v", rec.Message, rec.Level)
				}
				a := attrs(rec)
				got = append(got, fmt.Sprintf("%s|%v", a["line"], a["cut"]))
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("logged %q, want %q", got, tt.want)
			}
		})
	}
}
