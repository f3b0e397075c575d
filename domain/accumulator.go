package domain

import (
	"time"
	"unicode/utf8"
)

// Message is one accumulated agent message.
type Message struct {
	// ID is the messageId its chunks shared ("" when they carried none).
	ID string
	// Text is the accumulated text, at most MessageCap runes; a message cut
	// at the cap ends with "…".
	Text string
	// At is the time the message's last text chunk arrived.
	At time.Time
}

// Accumulator joins agent_message_chunk text into whole messages, keyed by
// messageId. It holds at most one message in progress and remembers the
// latest completed one. The zero value is ready to use. It is not safe for
// concurrent use and must not be copied after first use.
type Accumulator struct {
	cur     Message
	buf     []byte
	runes   int
	active  bool
	last    Message
	hasLast bool
}

// Add appends a text chunk. When a message with a different ID is in
// progress, that message is completed first and returned with flushed true
// (flushed is false when it had no text). The empty string is an ID like any
// other: chunks without an ID belong to one message until it is flushed.
func (a *Accumulator) Add(messageID, text string, at time.Time) (done Message, flushed bool) {
	if a.active && a.cur.ID != messageID {
		done, flushed = a.Flush()
	}
	if !a.active {
		a.active = true
		a.cur = Message{ID: messageID}
		a.buf = a.buf[:0]
		a.runes = 0
	}
	a.cur.At = at
	a.appendCapped(text)
	return done, flushed
}

// appendCapped appends text while keeping at most MessageCap+1 runes: one
// more than the cap is enough to know the message must be cut.
func (a *Accumulator) appendCapped(text string) {
	room := MessageCap + 1 - a.runes
	if room <= 0 || text == "" {
		return
	}
	if len(text) <= room {
		a.buf = append(a.buf, text...)
		a.runes += utf8.RuneCountInString(text)
		return
	}
	i, n := 0, 0
	for i < len(text) && n < room {
		_, size := utf8.DecodeRuneInString(text[i:])
		i += size
		n++
	}
	a.buf = append(a.buf, text[:i]...)
	a.runes += n
}

// Flush completes the message in progress and clears it. It reports false
// when no message is in progress or the message has no text; otherwise the
// message also becomes the one Last returns.
func (a *Accumulator) Flush() (Message, bool) {
	if !a.active {
		return Message{}, false
	}
	m := a.cur
	m.Text = TruncateRunes(string(a.buf), MessageCap)
	a.active = false
	a.cur = Message{}
	a.buf = a.buf[:0]
	a.runes = 0
	if m.Text == "" {
		return Message{}, false
	}
	a.last, a.hasLast = m, true
	return m, true
}

// Last returns the latest completed message, if any.
func (a *Accumulator) Last() (Message, bool) {
	return a.last, a.hasLast
}
