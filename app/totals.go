package app

import (
	"sync"
	"unicode/utf8"

	"github.com/acpdrive/acpdrive/domain"
)

// sessionTotals sums a session's turns (Session.Totals,
// docs/behaviour.md#token-accounting). It is safe for concurrent use.
type sessionTotals struct {
	mu sync.Mutex
	t  domain.Totals
}

// add counts one turn's result.
func (s *sessionTotals) add(res domain.TurnResult) {
	s.mu.Lock()
	s.t.Add(res)
	s.mu.Unlock()
}

// snapshot returns a copy of the totals so far.
func (s *sessionTotals) snapshot() domain.Totals {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.t.Clone()
}

// turnReply collects a turn's reply (TurnResult.Reply,
// docs/behaviour.md#turn-disposition) from the events the session emits:
// the text of the session's own message_chunk events since the last
// message boundary (the agent's notification that ends a message), at
// most domain.ReplyCap bytes. A child session's events are not the reply.
//
// It has no lock of its own: observe runs in the session's sink, which
// the event stream calls under its sink lock (children's events too, through
// their parent's), and begin and take run under that same lock
// (eventStream.underSink), so a chunk costs no second lock.
type turnReply struct {
	buf   []byte
	cut   bool
	ended bool // the message in buf ended; the next chunk starts another
}

// observe reads one emitted event.
func (r *turnReply) observe(ev domain.Event) {
	if ev.ParentSessionID != "" {
		return
	}
	switch {
	case ev.Type == domain.EventMessageChunk:
		if r.ended {
			r.buf, r.cut, r.ended = r.buf[:0], false, false
		}
		r.appendCapped(ev.Message)
	case ev.Type == domain.EventNotification && ev.Origin == domain.OriginAgent:
		r.ended = true
	}
}

// appendCapped appends text up to domain.ReplyCap bytes, cut at a rune
// boundary.
func (r *turnReply) appendCapped(text string) {
	if r.cut {
		return
	}
	room := domain.ReplyCap - len(r.buf)
	if len(text) <= room {
		r.buf = append(r.buf, text...)
		return
	}
	i := room
	for i > 0 && !utf8.RuneStart(text[i]) {
		i--
	}
	r.buf = append(r.buf, text[:i]...)
	r.cut = true
}

// begin forgets what came before the turn.
func (r *turnReply) begin() { r.buf, r.cut, r.ended = r.buf[:0], false, false }

// take returns the turn's reply and whether it was cut.
func (r *turnReply) take() (string, bool) { return string(r.buf), r.cut }
