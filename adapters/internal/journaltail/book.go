package journaltail

import "github.com/acpdrive/acpdrive/domain"

// Kind is what one journal line means to the turn being read.
type Kind int

const (
	// LineOther means nothing to a turn.
	LineOther Kind = iota
	// LineTurnStart is a prompt: it opens a turn, and an ended turn
	// nobody asked for is dropped.
	LineTurnStart
	// LineCall is a model call's record carrying every counter mapped.
	LineCall
	// LineIncompleteCall is a model call's record that lacks a counter;
	// it does not count.
	LineIncompleteCall
	// LineTurnEnd ends the turn being read.
	LineTurnEnd
	// LineFinalReply notes that the turn's final reply was read.
	LineFinalReply
	// LineRoundEnd ends a model round, and the turn when its final reply
	// was read.
	LineRoundEnd
)

// Line is one journal line as a runtime's format reads it: its kind and,
// for a LineCall, the call's figures and model.
type Line struct {
	Kind  Kind
	Usage domain.Usage
	Model string
}

// Book is the turn state of a journal read line by line: the turn being
// read and the ended turn not yet reported. The zero value has no turn;
// it is not safe for concurrent use.
type Book struct {
	open, ended *bookTurn
}

type bookTurn struct {
	figures Figures
	final   bool // a LineFinalReply was read
}

// Fold applies one line to the turns.
func (b *Book) Fold(l Line) {
	switch l.Kind {
	case LineTurnStart:
		b.open, b.ended = &bookTurn{}, nil
	case LineCall:
		if b.open != nil {
			f := &b.open.figures
			f.Usage = f.Usage.Add(l.Usage)
			f.Records++
			if l.Model != "" {
				f.Model = l.Model
			}
		}
	case LineFinalReply:
		if b.open != nil {
			b.open.final = true
		}
	case LineTurnEnd:
		b.end()
	case LineRoundEnd:
		if b.open != nil && b.open.final {
			b.end()
		}
	}
}

func (b *Book) end() {
	if b.open != nil {
		b.ended, b.open = b.open, nil
	}
}

// Reset forgets the turns (a new session followed).
func (b *Book) Reset() { b.open, b.ended = nil, nil }

// TakeEnded removes and returns the ended turn not yet reported.
func (b *Book) TakeEnded() (Figures, bool) {
	t := b.ended
	if t == nil {
		return Figures{}, false
	}
	b.ended = nil
	return t.figures, true
}

// TakeOpen removes and returns the turn being read if it counted at
// least one record.
func (b *Book) TakeOpen() (Figures, bool) {
	t := b.open
	if t == nil || t.figures.Records == 0 {
		return Figures{}, false
	}
	b.open = nil
	return t.figures, true
}
