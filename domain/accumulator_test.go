package domain_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/acpdrive/acpdrive/domain"
)

// accStep is one operation on an Accumulator and what it must return.
type accStep struct {
	flush bool // call Flush instead of Add
	id    string
	text  string
	at    int // seconds after t0

	want      domain.Message // expected completed message; its At comes from wantAt
	wantAt    int
	wantOK    bool
	last      string // expected Last().Text when checkLast is set
	lastOK    bool
	lastAt    int
	checkLast bool
}

func TestAccumulator(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	sec := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }

	long := strings.Repeat("ü", 300)
	capped := strings.Repeat("ü", 300) + strings.Repeat("ü", 199) + "…"

	tests := []struct {
		name  string
		steps []accStep
	}{
		{
			name: "flush on empty accumulator",
			steps: []accStep{
				{flush: true, wantOK: false, checkLast: true, lastOK: false},
			},
		},
		{
			name: "same id accumulates, flush reports, second flush reports nothing",
			steps: []accStep{
				{id: "m1", text: "Hel", at: 1},
				{id: "m1", text: "lo", at: 2},
				{flush: true, want: domain.Message{ID: "m1", Text: "Hello"}, wantAt: 2, wantOK: true,
					checkLast: true, last: "Hello", lastOK: true, lastAt: 2},
				{flush: true, wantOK: false, checkLast: true, last: "Hello", lastOK: true, lastAt: 2},
			},
		},
		{
			name: "different id flushes the previous message",
			steps: []accStep{
				{id: "m1", text: "one", at: 1},
				{id: "m2", text: "two", at: 5, want: domain.Message{ID: "m1", Text: "one"}, wantAt: 1, wantOK: true,
					checkLast: true, last: "one", lastOK: true, lastAt: 1},
				{flush: true, want: domain.Message{ID: "m2", Text: "two"}, wantAt: 5, wantOK: true,
					checkLast: true, last: "two", lastOK: true, lastAt: 5},
			},
		},
		{
			name: "empty id is an id",
			steps: []accStep{
				{id: "", text: "a", at: 1},
				{id: "", text: "b", at: 2},
				{id: "m1", text: "c", at: 3, want: domain.Message{ID: "", Text: "ab"}, wantAt: 2, wantOK: true},
				{id: "", text: "d", at: 4, want: domain.Message{ID: "m1", Text: "c"}, wantAt: 3, wantOK: true},
				{flush: true, want: domain.Message{ID: "", Text: "d"}, wantAt: 4, wantOK: true},
			},
		},
		{
			name: "message with only empty chunks is not reported",
			steps: []accStep{
				{id: "m1", text: "", at: 1},
				{id: "m2", text: "x", at: 2, wantOK: false, checkLast: true, lastOK: false},
				{flush: true, want: domain.Message{ID: "m2", Text: "x"}, wantAt: 2, wantOK: true},
			},
		},
		{
			name: "At is the time of the last text chunk",
			steps: []accStep{
				{id: "m1", text: "a", at: 1},
				{id: "m1", text: "b", at: 9},
				{id: "m1", text: "", at: 12},
				{flush: true, want: domain.Message{ID: "m1", Text: "ab"}, wantAt: 12, wantOK: true},
			},
		},
		{
			name: "exactly 500 multibyte runes is not cut",
			steps: []accStep{
				{id: "m", text: strings.Repeat("日", 250), at: 1},
				{id: "m", text: strings.Repeat("日", 250), at: 2},
				{flush: true, want: domain.Message{ID: "m", Text: strings.Repeat("日", 500)}, wantAt: 2, wantOK: true},
			},
		},
		{
			name: "501 multibyte runes is cut to 499 plus ellipsis",
			steps: []accStep{
				{id: "m", text: strings.Repeat("日", 250), at: 1},
				{id: "m", text: strings.Repeat("日", 251), at: 2},
				{flush: true, want: domain.Message{ID: "m", Text: strings.Repeat("日", 499) + "…"}, wantAt: 2, wantOK: true},
			},
		},
		{
			name: "chunks after the cap are ignored but still date the message",
			steps: []accStep{
				{id: "m", text: long, at: 1},
				{id: "m", text: long, at: 2},
				{id: "m", text: long, at: 3},
				{flush: true, want: domain.Message{ID: "m", Text: capped}, wantAt: 3, wantOK: true,
					checkLast: true, last: capped, lastOK: true, lastAt: 3},
			},
		},
		{
			name: "single chunk far over the cap",
			steps: []accStep{
				{id: "m", text: strings.Repeat("x", 10000), at: 1},
				{flush: true, want: domain.Message{ID: "m", Text: strings.Repeat("x", 499) + "…"}, wantAt: 1, wantOK: true},
			},
		},
		{
			name: "new message after flush starts fresh",
			steps: []accStep{
				{id: "m", text: "first", at: 1},
				{flush: true, want: domain.Message{ID: "m", Text: "first"}, wantAt: 1, wantOK: true},
				{id: "m", text: "again", at: 2, wantOK: false},
				{flush: true, want: domain.Message{ID: "m", Text: "again"}, wantAt: 2, wantOK: true},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var a domain.Accumulator
			for i, s := range tt.steps {
				var got domain.Message
				var ok bool
				if s.flush {
					got, ok = a.Flush()
				} else {
					got, ok = a.Add(s.id, s.text, sec(s.at))
				}
				if ok != s.wantOK {
					t.Fatalf("step %d: ok = %v, want %v (got %+v)", i, ok, s.wantOK, got)
				}
				if ok {
					want := s.want
					want.At = sec(s.wantAt)
					if got != want {
						t.Fatalf("step %d: message = %+v, want %+v", i, got, want)
					}
					if n := utf8.RuneCountInString(got.Text); n > domain.MessageCap {
						t.Fatalf("step %d: %d runes over the cap", i, n)
					}
				} else if got != (domain.Message{}) {
					t.Fatalf("step %d: not ok but message %+v", i, got)
				}
				if s.checkLast {
					last, lok := a.Last()
					if lok != s.lastOK {
						t.Fatalf("step %d: Last ok = %v, want %v", i, lok, s.lastOK)
					}
					if lok && (last.Text != s.last || !last.At.Equal(sec(s.lastAt))) {
						t.Fatalf("step %d: Last = %+v, want text %q at %d", i, last, s.last, s.lastAt)
					}
				}
			}
		})
	}
}
