package localexec

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

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
			var tail strings.Builder
			l := &lineLogger{tail: &tail, logger: slog.New(h), pid: 7}
			for _, w := range tt.writes {
				if n, err := l.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			l.Flush()
			if tail.String() != strings.Join(tt.writes, "") {
				t.Fatalf("tail kept %q, want every byte", tail.String())
			}
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
