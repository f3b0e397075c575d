package domain

import (
	"errors"
	"runtime"
	"slices"
	"testing"
)

func TestSplitWindowsCommandLine(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{``, nil},
		{"  \t ", nil},
		{`C:\tools\agent.exe --acp`, []string{`C:\tools\agent.exe`, `--acp`}},
		{`"C:\Program Files\agent\agent.exe" --acp`, []string{`C:\Program Files\agent\agent.exe`, `--acp`}},
		{`C:\a"b c"\d.exe x`, []string{`C:\ab c\d.exe`, `x`}},
		{`"C:\dir\\" x`, []string{`C:\dir\\`, `x`}},
		{`agent a\b c\\d`, []string{`agent`, `a\b`, `c\\d`}},
		{`agent "a b" c`, []string{`agent`, `a b`, `c`}},
		{`agent a\"b`, []string{`agent`, `a"b`}},
		{`agent a\\"b c"`, []string{`agent`, `a\b c`}},
		{`agent a\\\"b`, []string{`agent`, `a\"b`}},
		{`agent "C:\dir\\"`, []string{`agent`, `C:\dir\`}},
		{`agent "a""b"`, []string{`agent`, `a"b`}},
		{`agent "" x`, []string{`agent`, ``, `x`}},
		{`agent 'a b' %PATH% ^& |`, []string{`agent`, `'a`, `b'`, `%PATH%`, `^&`, `|`}},
		{"agent\ta\r\nb", []string{`agent`, `a`, `b`}},
		{`agent tail\`, []string{`agent`, `tail\`}},
		{`   agent   x  `, []string{`agent`, `x`}},
	}
	for _, c := range cases {
		got, err := SplitWindowsCommandLine(c.in)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("SplitWindowsCommandLine(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{`"C:\Program Files\agent.exe`, `agent "open`} {
		if _, err := SplitWindowsCommandLine(in); !errors.Is(err, ErrUnterminatedQuote) {
			t.Errorf("SplitWindowsCommandLine(%q) error = %v; want ErrUnterminatedQuote", in, err)
		}
	}
}

func TestSplitHostCommandLineKeepsPOSIXRulesOffWindows(t *testing.T) {
	in := `agent 'a b' c\ d`
	host, herr := SplitHostCommandLine(in)
	var want []string
	var werr error
	if hostIsWindows {
		want, werr = SplitWindowsCommandLine(in)
	} else {
		want, werr = SplitCommandLine(in)
	}
	if !slices.Equal(host, want) || (herr == nil) != (werr == nil) {
		t.Fatalf("SplitHostCommandLine(%q) = %q, %v; want %q, %v", in, host, herr, want, werr)
	}
}

// hostIsWindows tells the tests which splitter the host uses.
var hostIsWindows = runtime.GOOS == "windows"
