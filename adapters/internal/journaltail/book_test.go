package journaltail_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/acpdrive/acpdrive/adapters/internal/journaltail"
	"github.com/acpdrive/acpdrive/domain"
)

func TestBook(t *testing.T) {
	var (
		start = journaltail.Line{Kind: journaltail.LineTurnStart}
		end   = journaltail.Line{Kind: journaltail.LineTurnEnd}
		final = journaltail.Line{Kind: journaltail.LineFinalReply}
		round = journaltail.Line{Kind: journaltail.LineRoundEnd}
		bad   = journaltail.Line{Kind: journaltail.LineIncompleteCall}
	)
	call := func(n int64, model string) journaltail.Line {
		return journaltail.Line{Kind: journaltail.LineCall, Usage: domain.Usage{OutputTokens: n}, Model: model}
	}
	figures := func(n int64, model string, records int) *journaltail.Figures {
		return &journaltail.Figures{Usage: domain.Usage{OutputTokens: n}, Model: model, Records: records}
	}
	cases := []struct {
		name        string
		lines       []journaltail.Line
		ended, open *journaltail.Figures
	}{
		{"a turn ended", []journaltail.Line{start, call(2, "a"), call(3, ""), end}, figures(5, "a", 2), nil},
		{"the last model named", []journaltail.Line{start, call(2, "a"), call(3, "b"), end}, figures(5, "b", 2), nil},
		{"an open turn", []journaltail.Line{start, call(2, "a")}, nil, figures(2, "a", 1)},
		{"an open turn without a record", []journaltail.Line{start, bad}, nil, nil},
		{"a record before any prompt", []journaltail.Line{call(2, "a"), end}, nil, nil},
		{"an ended turn without a record", []journaltail.Line{start, bad, end}, figures(0, "", 0), nil},
		{"a new prompt drops an ended turn", []journaltail.Line{start, call(2, "a"), end, start, call(1, "b")}, nil, figures(1, "b", 1)},
		{"a round end without a final reply", []journaltail.Line{start, call(2, "a"), round}, nil, figures(2, "a", 1)},
		{"a round end after a final reply", []journaltail.Line{start, call(2, "a"), round, call(1, ""), final, round}, figures(3, "a", 2), nil},
		{"a final reply alone", []journaltail.Line{start, call(2, "a"), final}, nil, figures(2, "a", 1)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b journaltail.Book
			for _, l := range c.lines {
				b.Fold(l)
			}
			ended, ok := b.TakeEnded()
			assert.Equal(t, c.ended != nil, ok, "ended")
			if c.ended != nil {
				assert.Equal(t, *c.ended, ended)
			}
			open, ok := b.TakeOpen()
			assert.Equal(t, c.open != nil, ok, "open")
			if c.open != nil {
				assert.Equal(t, *c.open, open)
			}
			_, again := b.TakeEnded()
			assert.False(t, again, "taken once")
		})
	}
}

func TestBookReset(t *testing.T) {
	var b journaltail.Book
	b.Fold(journaltail.Line{Kind: journaltail.LineTurnStart})
	b.Fold(journaltail.Line{Kind: journaltail.LineCall, Usage: domain.Usage{OutputTokens: 1}})
	b.Reset()
	_, ok := b.TakeOpen()
	assert.False(t, ok)
}
