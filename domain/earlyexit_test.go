package domain_test

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/acpdrive/acpdrive/domain"
)

func TestEarlyExitReport(t *testing.T) {
	const p = "the agent runtime exited before responding: "
	tests := []struct {
		name      string
		status    string
		stderr    []byte
		truncated bool
		want      string
	}{
		{"empty stderr", "exit status 1", nil, false,
			p + "exit status 1: no standard-error output"},
		{"empty slice", "signal: killed", []byte{}, false,
			p + "signal: killed: no standard-error output"},
		{"single line", "exit status 127", []byte("bash: gemini: command not found\n"), false,
			p + "exit status 127: bash: gemini: command not found"},
		{"lines joined, blank dropped, trimmed", "exit status 2",
			[]byte("\n  first line  \n\n \t \nsecond\r\nthird\n\n"), false,
			p + "exit status 2: first line | second | third"},
		{"truncated prefix", "exit status 1", []byte("tail line\n"), true,
			p + "exit status 1: [earlier output omitted] tail line"},
		{"truncated and empty", "exit status 1", []byte("\n\n"), true,
			p + "exit status 1: [earlier output omitted] no standard-error output"},
		{"only blank is empty", "exit status 3", []byte(" \n\t\r\n"), false,
			p + "exit status 3: no standard-error output"},
		{"SGR colors", "exit status 1", []byte("\x1b[31mError:\x1b[0m bad \x1b[1;33mthing\x1b[m"), false,
			p + "exit status 1: Error: bad thing"},
		{"CSI cursor and erase", "exit status 1", []byte("\x1b[2K\x1b[1Gprogress 100%\x1b[?25h"), false,
			p + "exit status 1: progress 100%"},
		{"OSC title with BEL", "exit status 1", []byte("\x1b]0;my title\x07after"), false,
			p + "exit status 1: after"},
		{"OSC hyperlink with ST", "exit status 1",
			[]byte("see \x1b]8;;https://example.test/x\x1b\\docs\x1b]8;;\x1b\\ now"), false,
			p + "exit status 1: see docs now"},
		{"unterminated OSC ends at newline", "exit status 1", []byte("a\x1b]0;title\nnext line"), false,
			p + "exit status 1: a | next line"},
		{"two-byte escape and charset", "exit status 1", []byte("\x1b(Bplain\x1b=\x1b7x\x1b8"), false,
			p + "exit status 1: plainx"},
		{"C1 CSI", "exit status 1", []byte("a\u009b31mb"), false,
			p + "exit status 1: ab"},
		{"C1 OSC with C1 ST", "exit status 1", []byte("a\u009d0;t\u009cb"), false,
			p + "exit status 1: ab"},
		{"DCS string", "exit status 1", []byte("a\x1bPq#0;2\x1b\\b"), false,
			p + "exit status 1: ab"},
		{"control characters stripped", "exit status 1", []byte("a\x00b\x07c\x08d\x7fe\x1bf"), false,
			p + "exit status 1: abcde"},
		{"trailing lone ESC", "exit status 1", []byte("abc\x1b"), false,
			p + "exit status 1: abc"},
		{"ESC then newline keeps the break", "exit status 1", []byte("a\x1b\nb"), false,
			p + "exit status 1: a | b"},
		{"tab becomes space", "exit status 1", []byte("key:\tvalue"), false,
			p + "exit status 1: key: value"},
		{"carriage return progress", "exit status 1", []byte("10%\r50%\r100%\n"), false,
			p + "exit status 1: 10% | 50% | 100%"},
		{"bidi controls stripped", "exit status 1", []byte("safe\u202eevil\u2066x\u2069\ufeff"), false,
			p + "exit status 1: safeevilx"},
		{"unicode line separator", "exit status 1", []byte("a\u2028b"), false,
			p + "exit status 1: a | b"},
		{"invalid utf8 replaced", "exit status 1", []byte("bad \xff\xfe byte"), false,
			p + "exit status 1: bad \ufffd byte"},
		{"multibyte kept", "exit status 1", []byte("Fehler: Datei »ä« fehlt — 日本"), false,
			p + "exit status 1: Fehler: Datei »ä« fehlt — 日本"},
		{"truncated mid rune drops continuation bytes", "exit status 1", []byte("日本"[1:]), true,
			p + "exit status 1: [earlier output omitted] 本"},
		{"not truncated mid rune is replaced", "exit status 1", []byte("日本"[1:]), false,
			p + "exit status 1: \ufffd本"},
		{"blank status", "  ", []byte("x"), false,
			p + "unknown exit status: x"},
		{"status with controls", "exit\x1b[31m status\n 9", []byte("x"), false,
			p + "exit status 9: x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := domain.EarlyExitReport(tt.status, tt.stderr, tt.truncated)
			if got != tt.want {
				t.Errorf("EarlyExitReport() =\n  %q\nwant\n  %q", got, tt.want)
			}
		})
	}
}

func TestEarlyExitReportLongTail(t *testing.T) {
	// A tail over 8 KiB keeps only its last 8 KiB and counts as cut.
	head := strings.Repeat("h", 100) + "\n"
	body := strings.Repeat("é", domain.StderrTailMax) // 2 bytes each: 16 KiB
	got := domain.EarlyExitReport("exit status 1", []byte(head+body), false)
	want := "the agent runtime exited before responding: exit status 1: [earlier output omitted] " +
		strings.Repeat("é", domain.StderrTailMax/2)
	if got != want {
		t.Errorf("long tail: got %d bytes starting %q, want %d bytes", len(got), got[:120], len(want))
	}

	// Exactly 8 KiB is kept whole and not marked cut.
	exact := strings.Repeat("x", domain.StderrTailMax)
	got = domain.EarlyExitReport("exit status 1", []byte(exact), false)
	if want := "the agent runtime exited before responding: exit status 1: " + exact; got != want {
		t.Errorf("exact 8 KiB tail changed (len %d, want %d)", len(got), len(want))
	}
	if domain.StderrTailMax != 8192 {
		t.Errorf("StderrTailMax = %d, want 8192", domain.StderrTailMax)
	}
}

func FuzzEarlyExitReport(f *testing.F) {
	f.Add("exit status 1", []byte("plain\n"), false)
	f.Add("signal: killed", []byte("\x1b[31mred\x1b[0m\x1b]0;t\x07"), true)
	f.Add("", []byte("\xff\xfe\x1b\x9b\u009d"), true)
	f.Add("exit status 2", []byte("\x1b]8;;x\x1b\\y\x1bP\x1b"), false)
	f.Fuzz(func(t *testing.T, status string, stderr []byte, truncated bool) {
		got := domain.EarlyExitReport(status, stderr, truncated)
		if !strings.HasPrefix(got, domain.MsgEarlyExitPrefix) {
			t.Fatalf("missing prefix: %q", got)
		}
		if !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8 in %q", got)
		}
		for _, r := range got {
			if unicode.IsControl(r) {
				t.Fatalf("control character %U in %q", r, got)
			}
		}
	})
}
