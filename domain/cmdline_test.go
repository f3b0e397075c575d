package domain_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/acpdrive/acpdrive/domain"
)

func TestSplitCommandLine(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", nil},
		{"blank", " \t\n\r\v\f ", nil},
		{"single word", "gemini", []string{"gemini"}},
		{"words", "gemini --experimental-acp", []string{"gemini", "--experimental-acp"}},
		{"runs of blanks", "  a \t b\n\nc  ", []string{"a", "b", "c"}},
		{"single quotes literal", `echo 'a b $HOME \n "x"'`, []string{"echo", `a b $HOME \n "x"`}},
		{"double quotes", `echo "a b"`, []string{"echo", "a b"}},
		{"double quote escapes", `"a\"b\\c\$d\` + "`" + `e"`, []string{"a\"b\\c$d`e"}},
		{"double quote other backslash kept", `"a\nb\'c"`, []string{`a\nb\'c`}},
		{"double quote keeps single quote", `"it's"`, []string{"it's"}},
		{"single quote keeps double quote", `'say "hi"'`, []string{`say "hi"`}},
		{"backslash outside quotes", `a\ b c\\d \'e\"`, []string{"a b", `c\d`, `'e"`}},
		{"backslash newline continuation", "a\\\nb c", []string{"ab", "c"}},
		{"backslash newline in double quotes", "\"a\\\nb\"", []string{"ab"}},
		{"adjacent quoting joins", `a'b'"c"d`, []string{"abcd"}},
		{"empty single quotes", `a '' b`, []string{"a", "", "b"}},
		{"empty double quotes", `""`, []string{""}},
		{"empty quotes joined", `''""`, []string{""}},
		{"no expansion", `FOO=$BAR cmd *.go | tee ~/x; a && b`, []string{"FOO=$BAR", "cmd", "*.go", "|", "tee", "~/x;", "a", "&&", "b"}},
		{"multibyte", `ärger "日本 語" 'ü'`, []string{"ärger", "日本 語", "ü"}},
		{"escaped multibyte", `\日本`, []string{"日本"}},
		{"invalid utf8 preserved", "a\xffb 'c\xfe'", []string{"a\xffb", "c\xfe"}},
		{"quoted blank word", `cmd ' '`, []string{"cmd", " "}},
		{"non-breaking space is not a separator", "a\u00a0b", []string{"a\u00a0b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := domain.SplitCommandLine(tt.in)
			if err != nil {
				t.Fatalf("SplitCommandLine(%q) error: %v", tt.in, err)
			}
			if !slices.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
				t.Errorf("SplitCommandLine(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestSplitCommandLineErrors(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    error
		wantSub string
	}{
		{"unterminated single", `echo 'abc`, domain.ErrUnterminatedQuote, "single quote at byte 5"},
		{"unterminated double", `echo "abc`, domain.ErrUnterminatedQuote, "double quote at byte 5"},
		{"escaped closing double", `"abc\"`, domain.ErrUnterminatedQuote, "double quote at byte 0"},
		{"lone single", `'`, domain.ErrUnterminatedQuote, "single quote"},
		{"lone double", `"`, domain.ErrUnterminatedQuote, "double quote"},
		{"double inside single does not close", `'a"`, domain.ErrUnterminatedQuote, "single quote"},
		{"trailing backslash", `abc \`, domain.ErrTrailingBackslash, "at byte 4"},
		{"only backslash", `\`, domain.ErrTrailingBackslash, "at byte 0"},
		{"double quote ending in backslash", `"a\`, domain.ErrUnterminatedQuote, "double quote"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := domain.SplitCommandLine(tt.in)
			if err == nil {
				t.Fatalf("SplitCommandLine(%q) = %q, want error", tt.in, got)
			}
			if got != nil {
				t.Errorf("words %q returned with an error", got)
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("error %v is not %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.wantSub) {
				t.Errorf("error %q does not contain %q", err, tt.wantSub)
			}
		})
	}
}

func FuzzSplitCommandLine(f *testing.F) {
	for _, s := range []string{
		"", " ", "a b", `'a b'`, `"a \" b"`, `a\ b`, `\`, `'`, `"`, "a\\\nb", `""''`, "\xff\xfe", `"\`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := domain.SplitCommandLine(s)
		if err != nil {
			if words != nil {
				t.Fatalf("words %q with error %v", words, err)
			}
			if !errors.Is(err, domain.ErrUnterminatedQuote) && !errors.Is(err, domain.ErrTrailingBackslash) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if strings.Trim(s, " \t\n\r\v\f") == "" && words != nil {
			t.Fatalf("blank input %q gave %q", s, words)
		}
		// Words that need no quoting survive a round trip through single quotes.
		var quoted []string
		for _, w := range words {
			if strings.Contains(w, "'") {
				return
			}
			quoted = append(quoted, "'"+w+"'")
		}
		again, err := domain.SplitCommandLine(strings.Join(quoted, " "))
		if err != nil {
			t.Fatalf("round trip of %q: %v", words, err)
		}
		if !slices.Equal(again, words) {
			t.Fatalf("round trip of %q gave %q", words, again)
		}
	})
}
